"""Run one command and print its peak memory as JSON: ``python bench/rss_probe.py CMD ...``.

A process of its own, so that the figures are the command's alone: on Linux a child's ``ru_maxrss`` starts from
its parent's peak at the fork (the old address space's high-water mark is kept across ``exec``), so a bench
process that has drawn pages itself would lend the command its own peak. This probe is a small Python process.

Printed: ``{"status": ..., "rss": MB, "anon": MB, "file": MB}``: ``rss`` is ``ru_maxrss`` (what the goals name);
``anon`` the peak of the command's private memory (``RssAnon``, sampled every 5 ms); ``file`` its file-backed
resident pages at the last sample (shared libraries: how many of those pages count depends on how the page cache
holds each file, not on the command; measured 2026-12-02: ``import llvmlite.binding`` alone 116 MB with the file
held in large folios, 56 MB after ``posix_fadvise(POSIX_FADV_DONTNEED)`` on it).
"""

import json
import os
import subprocess
import sys
import time


def main(cmd: list[str]) -> dict:
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    anon = file = 0
    status = f"/proc/{p.pid}/status"
    while os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:  # running, not reaped
        try:
            with open(status) as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            anon = max(anon, int(fields["RssAnon"].split()[0]))
            file = int(fields["RssFile"].split()[0])
        except (OSError, KeyError, ValueError):
            pass
        time.sleep(0.005)
    _, st, ru = os.wait4(p.pid, 0)  # reaps it, with its own resource usage
    p.returncode = os.waitstatus_to_exitcode(st)
    return {"status": p.returncode, "rss": ru.ru_maxrss / 1024, "anon": anon / 1024, "file": file / 1024}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])))
