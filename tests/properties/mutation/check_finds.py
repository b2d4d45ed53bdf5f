#!/usr/bin/env python3
"""Checks that every find text of mutants.txt occurs exactly once in its file.

run.sh plants each mutant by replacing one occurrence of its find text; a
refactor that rewrites the line makes the mutant unplantable, and run.sh only
finds out after minutes of building. This check runs in the default suite
(label unit), so such a refactor fails CI at once, naming the mutant.

    check_finds.py SOURCE_DIR
"""
import pathlib
import sys


def main() -> int:
    src = pathlib.Path(sys.argv[1])
    catalogue = src / "tests/properties/mutation/mutants.txt"
    name = path = None
    bad = []
    edits = 0
    for number, line in enumerate(catalogue.read_text().splitlines(), 1):
        if line.startswith("name: "):
            name = line[len("name: "):]
        elif line.startswith("file: "):
            path = line[len("file: "):]
        elif line.startswith("find: "):
            find = line[len("find: "):]
            edits += 1
            target = src / path
            if not target.is_file():
                bad.append(f"mutants.txt:{number}: mutant {name}: file {path} does not exist")
                continue
            count = target.read_text().count(find)
            if count != 1:
                bad.append(f"mutants.txt:{number}: mutant {name}: {path} holds the find text {count} times, "
                           f"not once: {find}")
    if edits == 0:
        bad.append("mutants.txt: no find lines read")
    for message in bad:
        print(message)
    print(f"{edits} find texts checked, {len(bad)} not found exactly once")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
