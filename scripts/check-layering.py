#!/usr/bin/env python3
"""Checks the dependency directions that docs/architecture.md states.

docs/architecture.md holds one fenced block marked ```layering: a line per
folder of the product code, `FOLDER: ALLOWED ...`, where each allowed entry
is another folder (anything in it may be included) or one header (only that
header). This script maps every #include "..." of the product sources to the
folder that holds the included file and fails on

  - an include of a folder, or a header, that the folder's line does not
    allow (a dependency the picture does not show), and
  - a cycle among the folders (which the allowed lists would hide only if
    the docs stated one: they are checked for cycles too);

and lists the folders' dependencies it found. Exit status 0 when the code
matches the picture.

  python3 scripts/check-layering.py [REPO_ROOT]
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), '..'))
DOC = os.path.join(ROOT, 'docs', 'architecture.md')
SOURCE_EXT = ('.cpp', '.h', '.cu', '.c', '.td', '.inc')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_layering():
    text = open(DOC, encoding='utf-8').read()
    m = re.search(r'```layering\n(.*?)```', text, re.S)
    if not m:
        sys.exit('check-layering: docs/architecture.md has no ```layering block')
    rules = {}
    for line in m.group(1).splitlines():
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        folder, _, allowed = line.partition(':')
        rules[folder.strip()] = allowed.split()
    return rules


def folder_of_path(rel, folders):
    """The longest stated folder that holds repository path `rel`."""
    best = None
    for f in folders:
        if rel == f or rel.startswith(f + '/'):
            if best is None or len(f) > len(best):
                best = f
    return best


# Public header roots: an include path below one of them names the file
# root + path. The runtime's folder headers (runtime/lib) are included by
# their path below runtime/lib.
HEADER_ROOTS = ['include', 'runtime/include', 'runtime/lib']
GENERATED = re.compile(r'\.(h|cpp)\.inc$')


def resolve(include, src_dir):
    """The repository path an include names, or None (a system or
    generated header)."""
    local = os.path.normpath(os.path.join(src_dir, include))
    if os.path.isfile(os.path.join(ROOT, local)):
        return local
    for root in HEADER_ROOTS:
        path = os.path.join(root, include)
        if os.path.isfile(os.path.join(ROOT, path)):
            return path
    if GENERATED.search(include):
        # A .inc generated from the .td beside the header of that name.
        for root in HEADER_ROOTS:
            td_dir = os.path.join(root, os.path.dirname(include))
            if os.path.isdir(os.path.join(ROOT, td_dir)):
                return os.path.join(td_dir, os.path.basename(include))
    return None


def main():
    rules = read_layering()
    folders = set(rules)
    for allowed in rules.values():
        for a in allowed:
            if a.endswith(('.h', '.td')):
                continue
            if a not in folders:
                sys.exit(f'check-layering: {a} is allowed but has no line')
    # A folder's public headers live under include/ (or runtime/include/);
    # the stated folder names its sources (lib/...) and, through this map,
    # its headers.
    header_home = {}
    for f in folders:
        for pub in (f.replace('lib/', 'include/shardlin/', 1),
                    f.replace('runtime/lib/', 'runtime/include/shardlin/runtime/', 1)):
            if pub != f:
                header_home[pub] = f
    header_home['runtime/include/shardlin-c'] = 'runtime/lib/capi'

    def owner(rel):
        # include/shardlin/Execution/Jit.h belongs to lib/Execution/Jit when
        # that folder has a line of its own.
        stem = os.path.splitext(rel)[0]
        for pub, f in header_home.items():
            if stem.startswith(pub + '/') and f + stem[len(pub):] in folders:
                return f + stem[len(pub):]
        for pub, f in sorted(header_home.items(), key=lambda kv: -len(kv[0])):
            if rel == pub or rel.startswith(pub + '/'):
                return f
        return folder_of_path(rel, folders)

    errors = []
    found = {f: set() for f in folders}
    for f in sorted(folders):
        dirs = [f] + [pub for pub, home in header_home.items() if home == f]
        for d in dirs:
            top = os.path.join(ROOT, d)
            if not os.path.isdir(top):
                continue
            for dirpath, _, files in os.walk(top):
                for name in files:
                    if not name.endswith(SOURCE_EXT):
                        continue
                    path = os.path.join(dirpath, name)
                    rel = os.path.relpath(path, ROOT)
                    if owner(rel) != f:
                        continue  # a nested folder with a line of its own
                    text = open(path, encoding='utf-8', errors='replace').read()
                    for inc in INCLUDE.findall(text):
                        target = resolve(inc, os.path.dirname(rel))
                        if target is None:
                            continue
                        to = owner(target)
                        if to is None or to == f:
                            continue
                        found[f].add(to)
                        allowed = rules[f]
                        header = os.path.relpath(target, ROOT) if os.path.isabs(target) else target
                        if to in allowed or any(header.endswith('/' + a) or header == a
                                                for a in allowed if a.endswith(('.h', '.td'))):
                            continue
                        errors.append(f'{rel}: includes "{inc}" ({to}), which '
                                      f'docs/architecture.md does not let {f} use')
    # Cycles among the folders, in what the code does.
    state = {}
    def visit(n, stack):
        state[n] = 1
        for m in sorted(found[n]):
            if state.get(m) == 1:
                cyc = stack[stack.index(m):] + [m]
                errors.append('include cycle between folders: ' + ' -> '.join(cyc))
            elif m in found and state.get(m) is None:
                visit(m, stack + [m])
        state[n] = 2
    for n in sorted(found):
        if state.get(n) is None:
            visit(n, [n])
    for f in sorted(found):
        print(f'{f}: {" ".join(sorted(found[f])) or "-"}')
    if errors:
        print('\n'.join(errors), file=sys.stderr)
        print(f'check-layering: {len(errors)} violation(s)', file=sys.stderr)
        return 1
    print(f'check-layering: {len(folders)} folders, every include as stated, no cycle')
    return 0


if __name__ == '__main__':
    sys.exit(main())
