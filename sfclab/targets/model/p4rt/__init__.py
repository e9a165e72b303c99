"""A P4Runtime server in front of the embedded switch model.

Any P4Runtime client — sfclab's runtime, finsy, p4runtime-shell — drives the
model as it drives BMv2.  The server follows the P4Runtime specification
(v1.4; ``p4runtime.proto`` as finsy ships it):

* ``SetForwardingPipelineConfig`` takes a P4Info and, as ``p4_device_config``,
  the P4 program text (UTF-8); the P4Info must be the one sfclab derives from
  the program.  ``VERIFY`` checks, ``VERIFY_AND_COMMIT`` replaces the pipeline
  and clears the forwarding state, ``VERIFY_AND_SAVE`` stages a pipeline that
  later ``Read`` / ``Write`` requests address while packets still run the old
  one until ``COMMIT``, ``RECONCILE_AND_COMMIT`` keeps the forwarding state
  (``INVALID_ARGUMENT`` when some of it has no place in the new program).
  ``GetForwardingPipelineConfig`` answers with the committed config (an unset
  ``config`` before there is one) in all four response types.
* ``Write`` checks the device, the role and the primary, then that a pipeline
  is set; a failed batch answers ``UNKNOWN`` with one ``p4.v1.Error`` per
  update in the status details (``OK`` for those that were applied) while
  they fit gRPC's default metadata limit, else the failed updates only, each
  with its index (:mod:`.trailer`).
  ``CONTINUE_ON_ERROR`` tries every update; ``ROLLBACK_ON_ERROR`` and
  ``DATAPLANE_ATOMIC`` (batches hold the lock packets also take) apply all
  or nothing, the updates that were taken back reporting ``ABORTED``.
  Entities: table entries (match kinds with the specification's canonical
  rules, priorities, default entries, const tables and const default actions,
  action scopes, direct counters and meters, ``controller_metadata`` /
  ``metadata``), counters, direct counters, meters, direct meters,
  registers, multicast groups, clone sessions and digest configurations.
* ``Read`` supports the wildcards of each entity; a request that cannot be
  served ends the stream with ``UNKNOWN`` and one ``p4.v1.Error`` per request.
* ``StreamChannel``: client arbitration as in the specification (the primary
  is the client whose election id is the highest ever seen; when it leaves,
  the others are told there is no primary, ``NOT_FOUND``, until one of them
  arbitrates again with an election id at least that high), packet-out (from
  the primary only) / packet-in through the CPU port with the
  ``@controller_header`` metadata, digest lists (buffered by
  ``max_timeout_ns`` / ``max_list_size``, duplicates suppressed until
  acknowledged or ``ack_timeout_ns``) and ``StreamError`` replies for refused
  stream messages; at most ``max_streams`` (16) streams are open at once, more
  are refused with ``RESOURCE_EXHAUSTED``.

Only the default role exists.  Not supported (``UNIMPLEMENTED``): action
profiles, value sets, extern entries, per-colour meter counters, idle-timeout
notifications (``idle_timeout_ns`` is kept and read back for tables that
support it).

The server listens on 127.0.0.1 (a free port unless one is given)::

    server = start()          # server.address: '127.0.0.1:40123'

"""

# The modules: codec (values, codes, refusals), pipeline (the P4Info indexed against the
# model), streams (StreamChannel, arbitration), packets (packet-in / -out, digest lists),
# config (SetForwardingPipelineConfig), writes (Write batches, table entries), entities
# (the other entities' writes), reads (Read) and server (P4RuntimeModelServer, their mixins
# combined).
from .codec import P4RTError, decode_int, decode_signed, encode_int, encode_signed
from .server import P4RT_API_VERSION, P4RuntimeModelServer, start

__all__ = ["P4RuntimeModelServer", "start", "P4RT_API_VERSION", "P4RTError", "decode_int",
           "decode_signed", "encode_int", "encode_signed"]
