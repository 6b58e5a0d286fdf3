#!/usr/bin/env python3
"""Private headers stay in their module, and dependencies point down (issue 21).

A module is a folder directly under src/ (src/tlb, src/mmu, src/cpu...).
Its private headers are the files named *_priv.h in it. Each may be
included only

  - by files of its own module (src/MOD/...),
  - by the module's own tests and benchmarks (tests/MOD/..., bench/MOD/...),
    which test its internals on purpose,
  - and by at most one other file, named in the header's top comment as
    "Consumer outside src/MOD: src/OTHER/FILE" (the one place that needs
    its inline code, and says why there).

What another module needs for its inline fast path comes through a small
header meant for it (mmu/mmu_fast.h, tlb/tlb_token.h), not through a
private header. This script reads the #include lines of src/, tests/ and
bench/ and exits 1, naming file and line, for every include that breaks
the rule; 0 when there is none.

Second rule, over src/ only: modules sit in layers (LAYERS below, lowest
first) and a file includes only from its own layer or the ones below.
Lowest of all is src/textfile, the check every text reader shares, which
uses nothing of vmsplit's. The layer above it holds the machine's parts and its description, which read one
another's types: the TLB (src/tlb), the MMU and caches (src/mmu) and the
preset (src/preset: the machine description, holding the TLB's and the
caches' geometry types from tlb/tlb_geom.h and mmu/cache_geom.h). The core
(src/cpu) is above them, so tlb/ and mmu/ never include from cpu/. A new
module must be given its layer here.

    check_private_includes.py SOURCE_ROOT
    check_private_includes.py --self-test   (plants a violation in a
                                             scratch tree; must be caught)
"""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
CONSUMER = re.compile(r'[Cc]onsumer outside src/(\w+):\s*(src/[\w./-]+\w)')


# Lowest first; modules in one tuple may include from one another.
LAYERS = (
    ('textfile',),
    ('tlb', 'mmu', 'preset'),
    ('cpu',),
    ('kernel_model',),
    ('replay',),
    ('calib',),
    ('report',),
    ('cli',),
)


def module_of(rel):
    """src/MOD/... -> MOD, else None."""
    parts = rel.split('/')
    return parts[1] if len(parts) > 2 and parts[0] == 'src' else None


def top_comment(path):
    with open(path, encoding='utf-8') as f:
        text = f.read()
    m = re.match(r'\s*/\*(.*?)\*/', text, re.S)
    return m.group(1) if m else ''


def sources(root):
    for top in ('src', 'tests', 'bench'):
        for d, _, files in os.walk(os.path.join(root, top)):
            for n in files:
                if n.endswith(('.c', '.h')):
                    yield os.path.relpath(os.path.join(d, n), root)


def resolve(root, rel, inc):
    """The include's path relative to root, if it is a file under src/."""
    for base in (os.path.dirname(rel), 'src'):
        cand = os.path.normpath(os.path.join(base, inc))
        if cand.startswith('src/') and os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def check_layers(root, files, layers):
    """Includes from src/ into a higher layer, and modules with no layer."""
    level = {m: i for i, group in enumerate(layers) for m in group}
    errors = []
    for mod in sorted({module_of(rel) for rel in files if module_of(rel)}):
        if mod not in level:
            errors.append(f'src/{mod}: not in the layer map (LAYERS in {os.path.basename(__file__)})')
    for rel in files:
        mod = module_of(rel)
        if mod not in level:
            continue
        with open(os.path.join(root, rel), encoding='utf-8', errors='replace') as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                target = resolve(root, rel, m.group(1)) if m else None
                tmod = module_of(target) if target else None
                if tmod in level and level[tmod] > level[mod]:
                    errors.append(f'{rel}:{n}: includes {target}: src/{tmod} is in a layer '
                                  f'above src/{mod} (dependencies point down; see LAYERS)')
    return errors


def check(root, layers=LAYERS):
    files = sorted(sources(root))
    errors = check_layers(root, files, layers)
    privs = {}                   # header -> (module, named consumer or None)
    for rel in files:
        mod = module_of(rel)
        if mod and rel.endswith('_priv.h'):
            named = CONSUMER.findall(top_comment(os.path.join(root, rel)))
            if len(named) > 1:
                errors.append(f'{rel}: names {len(named)} consumers outside src/{mod}; at most one')
            consumer = None
            if named:
                cmod, consumer = named[0]
                if cmod != mod:
                    errors.append(f'{rel}: says "consumer outside src/{cmod}" but is in src/{mod}')
                if not os.path.isfile(os.path.join(root, consumer)):
                    errors.append(f'{rel}: its named consumer {consumer} does not exist')
            privs[rel] = (mod, consumer)
    for rel in files:
        top, _, rest = rel.partition('/')
        own = rest.split('/')[0] if top in ('src', 'tests', 'bench') else None
        with open(os.path.join(root, rel), encoding='utf-8', errors='replace') as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = resolve(root, rel, m.group(1))
                if target not in privs:
                    continue
                mod, consumer = privs[target]
                if own == mod or rel == consumer:
                    continue
                why = f'its one consumer outside is {consumer}' if consumer else \
                      'it names no consumer outside its module'
                errors.append(f'{rel}:{n}: includes {target}, private to src/{mod} ({why})')
    return errors


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def put(rel, text):
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), 'w') as f:
                f.write(text)
        layers = (('a', 'b'), ('c',))
        put('src/a/a_priv.h', '/* Consumer outside src/a: src/b/ok.c */\n')
        put('src/a/a.c', '#include "a/a_priv.h"\n#include "b/b.h"\n')
        put('src/b/b.h', '#include "a/a.h"\n')
        put('src/a/a.h', '\n')
        put('src/b/ok.c', '#include "a/a_priv.h"\n')
        put('src/c/c.h', '#include "a/a.h"\n')
        put('tests/a/t.c', '#include "a/a_priv.h"\n#include "c/c.h"\n')
        if check(root, layers):
            print('self-test: a tree that keeps the rules was refused:', check(root, layers))
            return 1
        put('src/b/bad.c', '#include <x.h>\n#include "a/a_priv.h"\n')
        put('tests/b/t.c', '#include "a/a_priv.h"\n')
        put('src/a/up.c', '\n#include "c/c.h"\n')
        put('src/d/d.c', '\n')
        errs = check(root, layers)
        want = {'src/b/bad.c:2', 'tests/b/t.c:1', 'src/a/up.c:2', 'src/d'}
        got = {e.split(': ')[0] for e in errs}
        if got != want:
            print('self-test: expected errors at', sorted(want), 'got', errs)
            return 1
    print('self-test: ok (two planted private includes, an upward include and a module '
          'with no layer caught; the allowed ones passed)')
    return 0


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    if argv[1] == '--self-test':
        return self_test()
    errors = check(argv[1])
    for e in errors:
        print(e)
    if errors:
        print(f'{len(errors)} include(s) break the private-header or the layer rule (see this '
              'script\'s top comment)')
        return 1
    print('private headers: every include keeps to its module or its one named consumer')
    print('layers: every include in src/ is from its own layer or below')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
