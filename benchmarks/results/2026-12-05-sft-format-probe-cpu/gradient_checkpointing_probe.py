import resource, sys, time, torch
from datasets import Dataset
from trl import SFTConfig, SFTTrainer
from cudal1.policy.recipe import load_recipe
from cudal1.policy.tasks import train_and_held_out
from cudal1.policy.pipeline import training_examples
from cudal1.policy.loading import load_policy
from cudal1.policy.sft import too_long
gc = sys.argv[1] == "on"
r = load_recipe("default", ["sft.seed_tasks=split", "sft.seed_kinds=[contrastive]", "sft.max_length=1280"], configs_dir="apps/configs")
t, h = train_and_held_out(r.tasks, r.evaluation.names)
ex = training_examples(r, t, h)
model, tok, peft = load_policy(r.policy, seed=0)
rows = [{"prompt": e["prompt"], "completion": e["completion"]} for e in ex]
cut = set(too_long(tok, rows, 1280)); rows = [x for i, x in enumerate(rows) if i not in cut][:8]
args = SFTConfig(output_dir="/tmp/gcp", max_steps=8, per_device_train_batch_size=1, learning_rate=2e-4, max_length=1280,
                 logging_steps=100, save_strategy="no", report_to="none", use_cpu=True, bf16=False, completion_only_loss=True,
                 gradient_checkpointing=gc)
tr = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tok, peft_config=peft)
t0 = time.monotonic(); tr.train(); dt = time.monotonic() - t0
print(f"RESULT gc={gc} {dt:.1f} s for 8 steps, peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/2**20:.2f} GiB", flush=True)
