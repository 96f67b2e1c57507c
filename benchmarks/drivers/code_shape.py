"""The shape figures the layout issues track, from the code itself: the functions with the most
parameters, the longest command modules, and the modules per moses_integration folder.

    python benchmarks/drivers/code_shape.py [CHECKOUT]
"""

import ast
import sys
from collections import Counter
from pathlib import Path


def parameters(function: ast.FunctionDef) -> int:
    args = function.args
    names = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    return len(names) - (1 if names and names[0].arg in ("self", "cls") else 0)


def main(root: Path) -> None:
    sources = [path for package in ("rescorer", "moses_integration") for path in sorted((root / package).rglob("*.py"))]
    functions = []
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append((parameters(node), f"{path.relative_to(root)}:{node.name}"))
    functions.sort(reverse=True)
    print("most parameters:")
    for count, name in functions[:8]:
        print(f"  {count:3d}  {name}")
    print(f"functions with more than 8 parameters: {sum(count > 8 for count, _ in functions)}")
    commands = sorted(((len(path.read_text().splitlines()), path.relative_to(root))
                       for path in (root / "rescorer" / "cli").glob("*commands.py")), reverse=True)
    print("longest command modules:", ", ".join(f"{name} {lines}" for lines, name in commands[:3]))
    folders = Counter(str(path.parent.relative_to(root)) for path in (root / "moses_integration").rglob("*.py")
                      if path.name != "__init__.py")
    print("moses_integration modules per folder:", ", ".join(f"{folder} {count}" for folder, count in sorted(folders.items())))


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]))
