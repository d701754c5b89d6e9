#!/usr/bin/env python3
"""Lists the functions of the compiler and the tools that are over a limit
of lines (default 120), and fails unless each says why above it.

A function may be longer when the comment right above its definition holds
a line starting `Long:` that says why (one table, one switch over every op,
...). Functions are found as definitions that start at the beginning of a
line (namespace scope, as LLVM's style writes them) or as member functions
defined in a class body, and end at their matching brace; lambdas count
toward the function that holds them.

  python3 scripts/check-function-length.py [--limit N] [REPO_ROOT]
"""
import argparse
import os
import re
import sys

FOLDERS = ['lib', 'tools', 'include', 'runtime/tools']
START = re.compile(r'^(\s{0,2})[A-Za-z_~][^;=]*\)\s*(const\s*)?(override\s*)?'
                   r'(noexcept\s*)?(->\s*[^{]+)?\{\s*(//.*)?$')
SKIP = re.compile(r'^\s*(if|for|while|switch|else|do|return|namespace|struct|'
                  r'class|enum|union|case|catch)\b')


def functions(path):
    lines = open(path, encoding='utf-8', errors='replace').read().split('\n')
    i = 0
    while i < len(lines):
        line = lines[i]
        # A definition whose signature spans lines: join up to 6 lines.
        head = line
        j = i
        while (j < len(lines) - 1 and j - i < 6 and '{' not in head
               and not head.rstrip().endswith(';') and '(' in line
               and not SKIP.match(line) and re.match(r'^\s{0,2}\S', line)):
            j += 1
            head += ' ' + lines[j].strip()
        if START.match(head) and not SKIP.match(head):
            depth = 0
            k = j
            started = False
            for k in range(j, len(lines)):
                code = re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'|//.*', '',
                              lines[k])
                for ch in code:
                    if ch == '{':
                        depth += 1
                        started = True
                    elif ch == '}':
                        depth -= 1
                if started and depth <= 0:
                    break
            comment = []
            c = i - 1
            while c >= 0 and lines[c].strip().startswith('//'):
                comment.append(lines[c].strip())
                c -= 1
            yield i + 1, k - i + 1, head.strip()[:80], comment
            i = k + 1
            continue
        i += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--limit', type=int, default=120)
    ap.add_argument('root', nargs='?',
                    default=os.path.join(os.path.dirname(__file__), '..'))
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    bad = 0
    for folder in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if not name.endswith(('.cpp', '.h')):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                for line, length, head, comment in functions(path):
                    if length <= args.limit:
                        continue
                    why = any(c.lstrip('/ ').startswith('Long:') for c in comment)
                    print(f'{rel}:{line}: {length} lines{"" if not why else " (says why)"}: {head}')
                    bad += not why
    if bad:
        print(f'check-function-length: {bad} function(s) over {args.limit} '
              'lines without a `Long:` reason above them', file=sys.stderr)
        return 1
    print(f'check-function-length: no function over {args.limit} lines '
          'without a reason')
    return 0


if __name__ == '__main__':
    sys.exit(main())
