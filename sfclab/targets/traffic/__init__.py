"""Traffic sfclab makes: class packets that cover every service path, planned once
and varied, sent in streams with progress; the values an NF's metadata can take."""
