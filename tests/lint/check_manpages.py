#!/usr/bin/env python3
"""Every public function (PETSC_EXTERN in include/gglmbs/*.h) is defined in src/ right after a PETSc
man-page comment that starts with its name: '/*@C' or '/*@', then '  Name - one line'. Exits 1 listing
the functions without one."""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
public = set()
for header in glob.glob(os.path.join(root, "include", "gglmbs", "*.h")):
    public |= set(re.findall(r"PETSC_EXTERN\s+[\w ]+?\b(\w+)\s*\(", open(header).read()))
if len(public) < 50:
    sys.exit("check_manpages: found only %d public functions: is %s the source tree?" % (len(public), root))
documented, defined = set(), set()
for source in glob.glob(os.path.join(root, "src", "**", "*.c"), recursive=True):
    text = open(source).read()
    for m in re.finditer(r"\n(?:PetscErrorCode|PetscBool) (\w+)\(", text):
        name = m.group(1)
        if name not in public:
            continue
        defined.add(name)
        before = text[: m.start()].rstrip()
        start = before.rfind("/*@")
        if before.endswith("@*/") and start >= 0 and re.match(r"/\*@C?\n  " + re.escape(name) + r" - \S", before[start:]):
            documented.add(name)
missing = sorted(public - documented)
for name in missing:
    print("check_manpages: %s: %s" % (name, "no man-page comment before its definition" if name in defined else "declared but not defined in src/"))
sys.exit(1 if missing else 0)
