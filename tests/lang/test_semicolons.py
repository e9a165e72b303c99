"""Semicolons are optional (issue 33.3): a statement ends where the next begins, so a
line break does what ``;`` does; where leaving one out makes a line ambiguous (two
statements on one line), the second is underlined with both fixes."""

from __future__ import annotations

import pytest

import sfclab
from sfclab.errors import ChainSyntaxError
from sfclab.lang.parser import parse_decls

WITH = """chain web match tcp.dport == 80 {
    input => firewall;
    firewall => (nat : drop ? firewall.verdict == 0);
    nat => lb => l3fwd => output;
}
chain mgmt: l2fwd -> l3fwd;
request r1: IDS before Firewall; Firewall before NAT;
End_of_Request
"""


def edges(chains) -> dict:
    return {name: sorted((u, v, d["kind"]) for u, v, d in c.graph.edges(data=True))
            for name, c in chains.chains.items()}


@pytest.mark.parametrize("fast", [True, False])
def test_the_same_chains_without_semicolons(fast: bool) -> None:
    without = WITH.replace(";", "")
    def names(text: str) -> list:
        return [[[r.name for r in st.refs] for st in d.stmts] for d in parse_decls(text, fast=fast)]

    assert names(without) == names(WITH)
    assert edges(sfclab.parse(without)) == edges(sfclab.parse(WITH))


def test_one_statement_over_lines_where_it_ends_in_or_starts_with_an_arrow() -> None:
    one = sfclab.parse("chain c { input => firewall =>\n nat\n nat\n => output }")
    assert edges(one) == edges(sfclab.parse("chain c { input => firewall => nat => output; }"))


@pytest.mark.parametrize("fast", [True, False])
def test_two_statements_on_one_line_need_a_semicolon(fast: bool) -> None:
    text = "chain web {\n    input => firewall nat => output\n}"
    with pytest.raises(ChainSyntaxError) as info:
        parse_decls(text, fast=fast)
    e = info.value
    assert (e.line, e.column, e.width) == (2, 23, 3)              # under `nat`
    assert e.message == "two statements on one line without a `;` between them"
    assert "`firewall; nat …`" in e.hint and "`firewall => nat …`" in e.hint
    assert str(e).splitlines()[1:3] == ["        input => firewall nat => output",
                                        " " * 26 + "^^^"]
    # with the `;` (or after a branch, which nothing can continue) it is fine
    sfclab.parse("chain web { input => firewall; firewall => output }")
    sfclab.parse("chain web { input => firewall => (nat : drop ? firewall.verdict == 0) "
                 "nat => output }")


def test_a_branch_on_a_line_of_its_own_is_told_where_it_goes() -> None:
    with pytest.raises(ChainSyntaxError) as info:
        sfclab.parse("chain web {\n    input => firewall\n    (nat : drop ? firewall.verdict == 0)\n}")
    assert (info.value.line, info.value.column) == (3, 5)
    assert info.value.hint.startswith("a branch follows its NF and `=>`")


def test_a_name_alone_is_underlined() -> None:
    with pytest.raises(sfclab.errors.ChainError) as info:
        sfclab.parse("chain web {\n    input => firewall\n    nat\n    firewall => output\n}")
    assert (info.value.line, info.value.column, info.value.width) == (3, 5, 3)
    assert info.value.message == "'nat' alone is not a statement"
