"""The Ray driver of `wsp tune`: `wsp tune FILE --ray ADDRESS` runs it (`python -m wsp_ray`).

It splits a file's explorations into shards (`wsp tune FILE --shard i/n`), runs one Ray task
per shard, each running `wsp` on its node, and merges the shards' JSON into the document a
local `wsp tune FILE --json` writes.
"""

from wsp_ray.driver import main, merge

__all__ = ["main", "merge"]
