import os, time, sys
out = open(sys.argv[1], "w")
prev = {}
end = time.time() + float(sys.argv[2])
while time.time() < end:
    now = time.time()
    for pid in os.listdir("/proc"):
        if not pid.isdigit(): continue
        try:
            st = open(f"/proc/{pid}/stat").read()
            cmd = open(f"/proc/{pid}/cmdline").read().replace("\0", " ")[:80]
        except OSError: continue
        if "python" not in cmd and "bwrap" not in cmd: continue
        f = st[st.rfind(")")+2:].split()
        minflt, majflt, ut, stt, nthr, cpu = int(f[7]), int(f[9]), int(f[11]), int(f[12]), int(f[17]), int(f[36])
        p = prev.get(pid)
        if p:
            d = (minflt-p[0], ut-p[1], stt-p[2])
            if d[1] + d[2] > 5:
                out.write(f"{now:.1f} pid={pid} thr={nthr} cpu={cpu} dminflt={d[0]} dut={d[1]} dst={d[2]} {cmd}\n")
        prev[pid] = (minflt, ut, stt)
    out.flush()
    time.sleep(0.5)
