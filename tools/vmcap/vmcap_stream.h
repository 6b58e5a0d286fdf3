/* The binary stream the vmcap Valgrind tool writes, one file per process
 * image (a fork or an exec starts a new file), and the converter
 * (src/replay/capture_import.c) reads. Shared by both, so it holds only
 * constants: the tool is built without libc.
 *
 * File name: DIR/vmcap.PID.SEQ, SEQ the first number not yet taken for that
 * pid (an exec of the same pid gets the next one). All integers are
 * little-endian. The file starts with the 8 magic bytes, then records, each
 * opening with a tag byte:
 *
 *   PROC     u32 pid, u32 ppid, u64 t_ns, u16 len + exe path, u16 len +
 *            command line (the exe, then the arguments, joined by spaces):
 *            the first record
 *   MAP      u64 start, u64 len, u8 prot (VMCAP_PROT_*), u8 flags
 *            (VMCAP_MAP_*): a mapping the kernel made at exec time (the
 *            image, the loader, the stack, the vDSO), before any code ran
 *   THREAD   u32 tid: the following references belong to this thread
 *   SYS_PRE  u32 tid, u16 nr, u64 t_ns, 6 x u64 args, u8 nstr,
 *            nstr x (u8 arg, u32 strlen): kernel entry; strlen of each
 *            path argument (VMCAP_STR_NONE if unreadable)
 *   SYS_POST u32 tid, u16 nr, u64 t_ns, i64 result (-errno on failure)
 *   EXECPATH u16 len + path: the execve path argument (before SYS_PRE)
 *   SIGNAL   u32 tid, u8 signo: a signal is delivered to a handler of the
 *            thread (Valgrind's pre_deliver_signal; fatal default actions
 *            end the image instead)
 *   INSN     uleb zigzag(addr - previous INSN addr), uleb n: n >= 1
 *            instructions fetched from addr's 4 KiB page, the first at addr
 *   DATA     the tag is 0x80 | k << 5 | one << 4 | sz (k = 0 read, 1 write,
 *            2 modify; sz 0..6: size 1 << sz, 7: a u8 size follows), then
 *            uleb zigzag(addr - previous DATA addr), then uleb n unless
 *            one is set (n = 1): n >= 1 references of size bytes, all
 *            starting in addr's 64-byte line, none crossing a page
 *   END      u64 t_ns, u64 raw references, u64 runs written: the process
 *            image ended normally through Valgrind's shutdown (a stream
 *            without it was cut: the converter refuses it)
 *
 * Runs (INSN, DATA) are in the order of their first reference; x86-64
 * syscall numbers are Linux's (asm/unistd_64.h). */
#ifndef VMCAP_STREAM_H
#define VMCAP_STREAM_H

#define VMCAP_MAGIC "VMCAP01\n"
#define VMCAP_MAGIC_LEN 8

#define VMCAP_TAG_PROC 0x01
#define VMCAP_TAG_MAP 0x02
#define VMCAP_TAG_THREAD 0x03
#define VMCAP_TAG_SYS_PRE 0x04
#define VMCAP_TAG_SYS_POST 0x05
#define VMCAP_TAG_EXECPATH 0x06
#define VMCAP_TAG_END 0x07
#define VMCAP_TAG_SIGNAL 0x08
#define VMCAP_TAG_INSN 0x10
#define VMCAP_TAG_DATA 0x80      /* | kind << 5 | one << 4 | size code */
#define VMCAP_DATA_ONE 0x10      /* n = 1, not written */
#define VMCAP_DATA_SZ_EXPLICIT 7 /* a u8 size follows the tag */

#define VMCAP_PROT_R 0x1
#define VMCAP_PROT_W 0x2
#define VMCAP_PROT_X 0x4
#define VMCAP_MAP_ANON 0x2 /* anonymous rather than file-backed */
#define VMCAP_MAP_SHARED 0x1
#define VMCAP_MAP_STACK 0x4 /* the client's initial stack */

#define VMCAP_STR_NONE 0xffffffffu
#define VMCAP_NARGS 6
#define VMCAP_MAX_STRS 2
#define VMCAP_DATA_MAX 64 /* data references longer than this are split by line */

#endif
