#!/usr/bin/env python3
"""Counts the lines a reference trace needs under several merging rules,
from the raw references of a Valgrind Lackey log (--trace-mem=yes):

  raw          every reference its own line
  one-stream   consecutive references of one interleaved I/D stream on the
               same 4 KiB page and of the same kind (the issue's measure)
  contract-A   i runs by page, data runs by kind, size and 64-byte line, an
               i run also ended by every new data run (one interleaved
               stream of runs)
  vmcap        the vmcap tool's rule: the instruction and the data stream
               merged independently (i by page; data by kind, size and
               line), each run placed at its first reference

Usage: merge_rules.py LACKEY_LOG  (prints one 'name lines' pair a line)."""
import sys

def main(path):
    raw = one = a = b = 0
    one_key = None
    a_i = a_d = None
    b_i = b_d = None
    with open(path, 'rb') as f:
        for line in f:
            if line[:1] == b'I':
                kind = 'i'
            elif line[:2] in (b' L', b' S', b' M'):
                kind = chr(line[1]).lower()
            else:
                continue
            addr_s, size_s = line[2:].strip().split(b',')
            addr, size = int(addr_s, 16), int(size_s)
            raw += 1
            key = (kind == 'i', kind, addr >> 12)
            if key != one_key:
                one += 1
                one_key = key
            if kind == 'i':
                page = addr >> 12
                if page != a_i:
                    a += 1
                    a_i = page
                if page != b_i:
                    b += 1
                    b_i = page
            else:
                dkey = (kind, size, addr >> 6)
                if dkey != a_d:
                    a += 1
                    a_d = dkey
                    a_i = None  # contract-A: a new data run ends the i run
                if dkey != b_d:
                    b += 1
                    b_d = dkey
    print('raw', raw)
    print('one-stream', one)
    print('contract-A', a)
    print('vmcap', b)

if __name__ == '__main__':
    main(sys.argv[1])
