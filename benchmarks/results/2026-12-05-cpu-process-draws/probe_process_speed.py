"""Per-process speed of one small CPU op in fresh processes, as the harness's workers run it (one thread, a batch of
input sets drawn, one call on each, outputs kept): uv run python .../probe_process_speed.py MODES TASK CALLS, MODES
a comma list of plain | keep | tunables | tunables-big | tunables-pad | tunables-thp | tunables-spacer (allocator
settings, random padding, transparent huge pages for the heap, a random spacer before each batch's inputs)."""
import sys, time, statistics as st, subprocess, json, os
def child(task, n):
    import torch
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    if task == "add_layernorm":
        ln = torch.nn.LayerNorm(512); f = lambda a, b: ln(a + b); shape = (8, 64, 512)
    elif task == "rms_norm":
        w = torch.ones(512); f = lambda a, b: a * torch.rsqrt(a.pow(2).mean(-1, keepdim=True) + 1e-6) * w; shape = (8, 64, 512)
    else:
        f = lambda a, b: torch.relu(a); shape = (256, 4096)
    means = []
    with torch.no_grad():
        import random
        spacer = None
        for batch in range(25):
            if os.environ.get("SPACER"):
                spacer = None
                spacer = torch.empty(random.randrange(0, 64 << 20, 4096), dtype=torch.uint8)
                spacer.fill_(1)
            if os.environ.get("PAD"):
                import random
                pads, sets = [], []
                for _ in range(n):
                    pads.append(torch.empty(random.randrange(0, 8192, 64), dtype=torch.uint8)); a = torch.randn(shape, generator=g)
                    pads.append(torch.empty(random.randrange(0, 8192, 64), dtype=torch.uint8)); b = torch.randn(shape, generator=g)
                    sets.append((a, b))
            else:
                sets = [(torch.randn(shape, generator=g), torch.randn(shape, generator=g)) for _ in range(n)]
            kept, ts = [], []
            for a, b in sets:
                t0 = time.perf_counter(); kept.append(f(a, b)); ts.append(time.perf_counter() - t0)
            means.append(1e3 * st.mean(ts))
            del kept, sets
    print(json.dumps(means))
if sys.argv[1] == "child":
    child(sys.argv[2], int(sys.argv[3])); sys.exit()
task, n = sys.argv[2], sys.argv[3]
for mode in sys.argv[1].split(","):
    env = dict(os.environ)
    if mode == "tunables-pad":
        env.update(PAD="1", GLIBC_TUNABLES="glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=134217728")
    if mode == "tunables-spacer":
        env.update(SPACER="1", GLIBC_TUNABLES="glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=134217728")
    if mode == "tunables-thp":
        env.update(GLIBC_TUNABLES="glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=134217728:glibc.malloc.hugetlb=1")
    if mode == "tunables":
        env.update(GLIBC_TUNABLES="glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=134217728")
    if mode == "tunables-big":
        env.update(GLIBC_TUNABLES="glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=17179869184:glibc.malloc.top_pad=268435456")
    if mode == "keep":
        env.update(MALLOC_MMAP_THRESHOLD_="33554432", MALLOC_TRIM_THRESHOLD_="17179869184", MALLOC_TOP_PAD_="268435456")
    per, within = [], []
    for p in range(8):
        m = json.loads(subprocess.run([sys.executable, __file__, "child", task, n], capture_output=True, text=True, env=env).stdout)
        per.append(round(st.median(m[5:]), 4))
        within.append(round(max(m[5:]) / min(m[5:]), 3))
    print(task, mode, "per-process median ms:", per, "spread", round(max(per) / min(per), 3), "within-process batch spread", within, flush=True)
