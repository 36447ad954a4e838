"""cudal1's main job: contrastive GRPO training of a CUDA-optimizing policy.

Not built yet (issue 6). Until then this script says so plainly and exits: it trains nothing.
"""

from __future__ import annotations

import sys


def main() -> int:
    print("cudal1 train_grpo: policy training (SFT -> self-training -> contrastive GRPO) is not built yet "
          "(issue 6). Nothing was trained.")
    print("What exists: the evaluation harness. Try:  uv run cudal1-eval --suite builtin --list")
    return 0


if __name__ == "__main__":
    sys.exit(main())
