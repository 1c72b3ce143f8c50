#!/usr/bin/env python3
"""cpu-time.py OUT COMMAND...: runs COMMAND (its standard streams inherited) and writes the
user + system CPU seconds it and its children used to OUT, to the microsecond (the kernel's
rusage from wait4; GNU time prints hundredths, too coarse for runs of a tenth of a second).
Exits with COMMAND's status."""
import os
import subprocess
import sys

if len(sys.argv) < 3:
    sys.exit("usage: cpu-time.py OUT COMMAND...")
out, argv = sys.argv[1], sys.argv[2:]
try:
    child = subprocess.Popen(argv)
except OSError as error:
    sys.exit(f"cpu-time.py: cannot run {argv[0]}: {error}")
_, status, usage = os.wait4(child.pid, 0)
with open(out, "w") as f:
    f.write(f"{usage.ru_utime + usage.ru_stime:.6f}\n")
sys.exit(os.waitstatus_to_exitcode(status))
