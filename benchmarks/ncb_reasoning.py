"""The reasoning score's cost: wordllama's import, the model's load and one score (docs/performance.md)."""

import time
t0 = time.perf_counter()
import wordllama  # noqa: F401
t1 = time.perf_counter()
from ani.netconfbench import reasoning
reasoning._model()
t2 = time.perf_counter()
for _ in range(20):
    reasoning.reasoning_score("Add a static route via 192.0.2.2 and a floating backup at distance 100",
                              [("e", "A static route to the loopback and a backup with administrative distance 100.")])
t3 = time.perf_counter()
print(f"import {t1 - t0:.2f} s, load {t2 - t1:.2f} s, one score {(t3 - t2) / 20 * 1000:.1f} ms")
