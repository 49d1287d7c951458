"""examples/ported/deepseek_lightning_indexer.wsp: the original's golden, stable top-8 indices
per row by score descending, lower index first on ties."""
import numpy as np

from ported_common import Golden, check_exact

g = Golden()
scores = g["Scores"][:, :, 0, :]
idx = np.arange(scores.shape[-1])
want = np.empty(scores.shape[:2] + (8,), dtype=np.int64)
for b in range(scores.shape[0]):
    for s in range(scores.shape[1]):
        want[b, s] = np.lexsort((idx, -scores[b, s]))[:8]
check_exact(g, "OutIdx", want[:, :, None, :])
g.done()
