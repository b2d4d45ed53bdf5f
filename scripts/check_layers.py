#!/usr/bin/env python3
"""The layer rule: no library includes or links a library above it.

The order is read from one line of README.md, the one that starts with
"Layers:", e.g.

    Layers: common → reference → protocol → attention → properties → ...

Folders joined by "/" share a layer and may not use each other. A source file
under FOLDER/ may include `seqpack/LIB/...` only when LIB's folder is FOLDER
itself or in a lower layer; FOLDER/CMakeLists.txt may link `seqpack::TARGET`
under the same rule. tests/ and the build tree are outside the rule (a test
may use anything it tests).

    scripts/check_layers.py [ROOT]     exit 0 when clean, 1 with one line per violation
"""
import re
import sys
from pathlib import Path

# The header folder `seqpack/<name>/` and the CMake target `seqpack::<name>`
# of each library folder, where they differ from the folder's name.
TARGET_FOLDER = {
    "gpu_cpp": "gpu", "gpu_omp": "gpu", "gpu_cuda": "gpu", "thrust_cpp": "gpu", "thrust_omp": "gpu",
    "thrust_cuda": "gpu", "torch_binding": "torch", "fuzz_support": "fuzz",
    "gpu_engine_cpp": "ports", "gpu_engine_omp": "ports", "torch_engine": "ports",
}
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cu", ".cuh", ".in"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]seqpack/([a-z_]+)/', re.M)
LINK = re.compile(r"\bseqpack::([a-z_]+)")


def read_layers(root):
    for line in (root / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("Layers:"):
            steps = line[len("Layers:"):].strip().strip("`").split("→")
            return {folder.strip(): rank for rank, step in enumerate(steps) for folder in step.split("/")}
    sys.exit("check_layers: README.md has no line that starts with 'Layers:'")


def folder_of(name, layers):
    name = TARGET_FOLDER.get(name, name)
    return name if name in layers else None


def check(root):
    layers = read_layers(root)
    problems = []
    missing = [f for f in layers if not (root / f).is_dir()]
    problems += [f"README.md: layer folder {f}/ does not exist" for f in missing]

    def judge(where, folder, used):
        target = folder_of(used, layers)
        if target is None or target == folder:
            return
        if layers[target] >= layers[folder]:
            how = "shares its layer" if layers[target] == layers[folder] else "is above it"
            problems.append(f"{where}: {folder}/ uses {used} ({target}/), which {how} in README.md's Layers line")

    for folder in layers:
        base = root / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for m in INCLUDE.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                judge(f"{path.relative_to(root)}:{line}", folder, m.group(1))
        for cmake in sorted(base.rglob("CMakeLists.txt")):
            text = re.sub(r"#.*", "", cmake.read_text(encoding="utf-8"))
            for m in LINK.finditer(text):
                if m.group(1) == "flags":  # the root's warning and sanitizer flags
                    continue
                line = text.count("\n", 0, m.start()) + 1
                judge(f"{cmake.relative_to(root)}:{line}", folder, m.group(1))
    return problems


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} problems", file=sys.stderr)
        return 1
    print("check_layers: every include and link runs down the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
