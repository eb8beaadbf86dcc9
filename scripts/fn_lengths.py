#!/usr/bin/env python3
"""Lists Rust functions by length (lines from `fn` to its closing brace, closures
included), longest first: `scripts/fn_lengths.py DIR... [--over N]`."""
import re, sys, pathlib

FN = re.compile(r'^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"[^"]*"\s+)?fn\s+(\w+)')

def strip(line, state):
    """The line without string literals and comments; `state` carries a block comment
    or a string across lines."""
    out, i = [], 0
    while i < len(line):
        if state['block']:
            j = line.find('*/', i)
            if j < 0:
                return ''.join(out)
            state['block'], i = False, j + 2
            continue
        if state['str']:
            if line[i] == '\\':
                i += 2
                continue
            if line[i] == '"':
                state['str'] = False
            i += 1
            continue
        c = line[i]
        if line.startswith('//', i):
            break
        if line.startswith('/*', i):
            state['block'], i = True, i + 2
            continue
        if c == '"':
            state['str'], i = True, i + 1
            continue
        m = re.match(r"'(\\.|[^\\'])'", line[i:])
        if m:
            i += len(m.group(0))
            continue
        out.append(c)
        i += 1
    return ''.join(out)

def functions(path):
    lines = path.read_text().splitlines()
    state = {'block': False, 'str': False}
    code = [strip(l, state) for l in lines]
    for n, l in enumerate(code):
        m = FN.match(l)
        if not m:
            continue
        depth, opened = 0, False
        for k in range(n, len(code)):
            for c in code[k]:
                if c == '{':
                    depth, opened = depth + 1, True
                elif c == '}':
                    depth -= 1
                elif c == ';' and not opened and depth == 0:
                    break
            else:
                if opened and depth == 0:
                    yield m.group(7), n + 1, k - n + 1
                    break
                continue
            break

def main():
    args, over = sys.argv[1:], 0
    if '--over' in args:
        i = args.index('--over')
        over = int(args[i + 1])
        del args[i:i + 2]
    found = []
    for d in args:
        for p in sorted(pathlib.Path(d).rglob('*.rs')) if pathlib.Path(d).is_dir() else [pathlib.Path(d)]:
            for name, line, length in functions(p):
                found.append((length, f'{p}:{line}', name))
    for length, at, name in sorted(found, reverse=True):
        if length > over:
            print(f'{length:5} {at} {name}')

main()
