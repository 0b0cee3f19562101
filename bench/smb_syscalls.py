#!/usr/bin/env python3
"""Where a `get -r` of an SMB tree spends its system calls, against
smbclient's `recurse; mget *`: `strace -f -c` of each on a 100-file tree from
smbd on loopback (bench/smb_bench.py's Smbd and ftp_bench.make_tree). One SMB
request is one writev on the socket, so request counts do not depend on the
build; times under strace do. Usage: bench/smb_syscalls.py [FERRY]
(default .build/debug/ferry). Writes /tmp/smb-syscalls-{ferry,smbclient}.txt.
"""
import os, shutil, sys, subprocess, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smb_bench import Smbd, PASSWORD
from ftp_bench import make_tree
root = tempfile.mkdtemp(prefix="smb-syscalls-root-")
make_tree(os.path.join(root, "tree"), 100)
s = Smbd(root)
time.sleep(1)
print(s.url("/tree"), flush=True)
work = tempfile.mkdtemp(prefix="smb-syscalls-work-")
env = dict(os.environ, FERRY_PASSWORD=PASSWORD, NETRC="/dev/null")
ferry = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.build/debug/ferry")
r = subprocess.run(["strace", "-f", "-c", "-o", "/tmp/smb-syscalls-ferry.txt", ferry, "get", "-r", s.url("/tree"), "-o", os.path.join(work, "t1"), "-j", "1", "--quiet"], env=env)
print("ferry rc", r.returncode)
os.makedirs(os.path.join(work, "t2"))
r = subprocess.run(["strace", "-f", "-c", "-o", "/tmp/smb-syscalls-smbclient.txt", "smbclient", "-p", str(s.port), "//127.0.0.1/bench", "-U", f"{s.user}%{PASSWORD}", "-c", "cd tree; recurse; prompt; mget *"], cwd=os.path.join(work, "t2"), capture_output=True)
print("smbclient rc", r.returncode)
s.stop()
shutil.rmtree(root, ignore_errors=True)
shutil.rmtree(work, ignore_errors=True)
