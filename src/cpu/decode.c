/* The x86 decoder: prefixes, one- and two-byte opcode maps, ModRM/SIB
 * (32-bit addressing, SDM Vol. 2A §2.1 and Tables 2-2, 2-3), immediates.
 * It turns bytes into an Insn whose handler does the work; decoding is a
 * pure function of the bytes (the decoded cache relies on that).
 *
 * Fetching: the bytes come from the frame of the last modelled fetch
 * reference; entering a new 16-byte block makes a new reference (see
 * cpu.h, "Instruction fetch"), so a decode and a decoded-cache hit touch
 * the ITLB identically.
 *
 * Not decoded (#UD): the 0x67 address-size prefix (16-bit addressing), x87,
 * MMX/SSE, MOV to/from debug registers, VERR/VERW, LAR/LSL, task switches. */
#include "cpu/cpu_priv.h"

/* Operand description of an opcode. */
#define D_MODRM (1u << 0)        /* a ModRM byte follows */
#define D_BYTE (1u << 1)         /* 8-bit operand size */
#define D_IMM8 (1u << 2)         /* imm8, sign-extended into imm */
#define D_IMMZ (1u << 3)         /* imm16/imm32 by operand size, sign-extended */
#define D_IMM16 (1u << 4)        /* imm16 into imm2 (RET n, ENTER) */
#define D_FARPTR (1u << 5)       /* offset16/32 into imm, selector into imm2 */
#define D_MOFFS (1u << 6)        /* 32-bit absolute memory operand */
#define D_REGOP (1u << 7)        /* register from opcode bits 2:0 */
#define D_GROUP (1u << 8)        /* handler from groups[op][ModRM.reg] */
#define D_MEMONLY (1u << 9)      /* ModRM must name memory, else #UD */
#define D_OPREG (1u << 10)       /* op = ModRM.reg (ALU group 1, shifts) */
#define D_ACC (1u << 11)         /* r/m operand is AL/AX/EAX */
#define D_ONE (1u << 12)         /* shift count 1 */
#define D_MODREG (1u << 13)      /* ModRM.mod ignored: always a register (MOV CRn) */
#define D_REGONLY (1u << 14)     /* ModRM must name a register, else #UD */

/* Cost classes, mapped to CpuCosts cycles when the Insn is built. */
enum { K_ALU, K_DYN, K_MUL, K_DIV, K_BRANCH, K_SERIAL, K_IO, K_INVLPG };

typedef struct {
    InsnFn fn;
    uint16_t flags;
    uint8_t op;
    uint8_t cost;
} OpDesc;

enum { G_3B, G_3V, G_4, G_5, G_1A, G_11B, G_11V, G_6, G_7, G_8, G_9, NGROUPS };

#define E(f, fl, o, k) { f, fl, o, k }
#define ALU(o, k) E(h_alu_rm_r, D_MODRM | D_BYTE, o, k), E(h_alu_rm_r, D_MODRM, o, k), \
    E(h_alu_r_rm, D_MODRM | D_BYTE, o, k), E(h_alu_r_rm, D_MODRM, o, k),             \
    E(h_alu_rm_imm, D_BYTE | D_IMM8 | D_ACC, o, k), E(h_alu_rm_imm, D_IMMZ | D_ACC, o, k)
#define R8(f, fl, k) E(f, fl, 0, k), E(f, fl, 0, k), E(f, fl, 0, k), E(f, fl, 0, k), \
    E(f, fl, 0, k), E(f, fl, 0, k), E(f, fl, 0, k), E(f, fl, 0, k)
#define CC8(f, fl, base, k) E(f, fl, base, k), E(f, fl, base + 1, k), E(f, fl, base + 2, k), \
    E(f, fl, base + 3, k), E(f, fl, base + 4, k), E(f, fl, base + 5, k),                 \
    E(f, fl, base + 6, k), E(f, fl, base + 7, k)

static const OpDesc op1[256] = {
    [0x00] = ALU(0, K_ALU),
    [0x06] = E(h_push_sreg, 0, SEG_ES, K_ALU), [0x07] = E(h_pop_sreg, 0, SEG_ES, K_ALU),
    [0x08] = ALU(1, K_ALU),
    [0x0E] = E(h_push_sreg, 0, SEG_CS, K_ALU),
    [0x10] = ALU(2, K_ALU),
    [0x16] = E(h_push_sreg, 0, SEG_SS, K_ALU), [0x17] = E(h_pop_sreg, 0, SEG_SS, K_ALU),
    [0x18] = ALU(3, K_ALU),
    [0x1E] = E(h_push_sreg, 0, SEG_DS, K_ALU), [0x1F] = E(h_pop_sreg, 0, SEG_DS, K_ALU),
    [0x20] = ALU(4, K_ALU),
    [0x27] = E(h_daa, 0, 0, K_ALU),
    [0x28] = ALU(5, K_ALU),
    [0x2F] = E(h_das, 0, 0, K_ALU),
    [0x30] = ALU(6, K_ALU),
    [0x37] = E(h_aaa, 0, 0, K_ALU),
    [0x38] = ALU(7, K_ALU),
    [0x3F] = E(h_aas, 0, 0, K_ALU),
    [0x40] = R8(h_inc_r, D_REGOP, K_ALU),
    [0x48] = R8(h_dec_r, D_REGOP, K_ALU),
    [0x50] = R8(h_push_r, D_REGOP, K_ALU),
    [0x58] = R8(h_pop_r, D_REGOP, K_ALU),
    [0x60] = E(h_pushad, 0, 0, K_ALU), [0x61] = E(h_popad, 0, 0, K_ALU),
    [0x68] = E(h_push_imm, D_IMMZ, 0, K_ALU),
    [0x69] = E(h_imul_r_rm_imm, D_MODRM | D_IMMZ, 0, K_MUL),
    [0x6A] = E(h_push_imm, D_IMM8, 0, K_ALU),
    [0x6B] = E(h_imul_r_rm_imm, D_MODRM | D_IMM8, 0, K_MUL),
    [0x6C] = E(h_ins, D_BYTE, 0, K_DYN), [0x6D] = E(h_ins, 0, 0, K_DYN),
    [0x6E] = E(h_outs, D_BYTE, 0, K_DYN), [0x6F] = E(h_outs, 0, 0, K_DYN),
    [0x70] = CC8(h_jcc, D_IMM8, 0, K_DYN),
    [0x78] = CC8(h_jcc, D_IMM8, 8, K_DYN),
    [0x80] = E(h_alu_rm_imm, D_MODRM | D_BYTE | D_IMM8 | D_OPREG, 0, K_ALU),
    [0x81] = E(h_alu_rm_imm, D_MODRM | D_IMMZ | D_OPREG, 0, K_ALU),
    [0x82] = E(h_alu_rm_imm, D_MODRM | D_BYTE | D_IMM8 | D_OPREG, 0, K_ALU),
    [0x83] = E(h_alu_rm_imm, D_MODRM | D_IMM8 | D_OPREG, 0, K_ALU),
    [0x84] = E(h_test_rm_r, D_MODRM | D_BYTE, 0, K_ALU),
    [0x85] = E(h_test_rm_r, D_MODRM, 0, K_ALU),
    [0x86] = E(h_xchg_rm_r, D_MODRM | D_BYTE, 0, K_ALU),
    [0x87] = E(h_xchg_rm_r, D_MODRM, 0, K_ALU),
    [0x88] = E(h_mov_rm_r, D_MODRM | D_BYTE, 0, K_ALU),
    [0x89] = E(h_mov_rm_r, D_MODRM, 0, K_ALU),
    [0x8A] = E(h_mov_r_rm, D_MODRM | D_BYTE, 0, K_ALU),
    [0x8B] = E(h_mov_r_rm, D_MODRM, 0, K_ALU),
    [0x8C] = E(h_mov_rm_sreg, D_MODRM, 0, K_ALU),
    [0x8D] = E(h_lea, D_MODRM | D_MEMONLY, 0, K_ALU),
    [0x8E] = E(h_mov_sreg_rm, D_MODRM, 0, K_ALU),
    [0x8F] = E(NULL, D_MODRM | D_GROUP, G_1A, K_ALU),
    [0x90] = E(h_nop, 0, 0, K_ALU),
    [0x91] = E(h_xchg_eax, D_REGOP, 0, K_ALU), [0x92] = E(h_xchg_eax, D_REGOP, 0, K_ALU),
    [0x93] = E(h_xchg_eax, D_REGOP, 0, K_ALU), [0x94] = E(h_xchg_eax, D_REGOP, 0, K_ALU),
    [0x95] = E(h_xchg_eax, D_REGOP, 0, K_ALU), [0x96] = E(h_xchg_eax, D_REGOP, 0, K_ALU),
    [0x97] = E(h_xchg_eax, D_REGOP, 0, K_ALU),
    [0x98] = E(h_cbw, 0, 0, K_ALU), [0x99] = E(h_cwd, 0, 0, K_ALU),
    [0x9A] = E(h_call_far, D_FARPTR, 0, K_DYN),
    [0x9B] = E(h_nop, 0, 0, K_ALU),
    [0x9C] = E(h_pushfd, 0, 0, K_ALU), [0x9D] = E(h_popfd, 0, 0, K_ALU),
    [0x9E] = E(h_sahf, 0, 0, K_ALU), [0x9F] = E(h_lahf, 0, 0, K_ALU),
    [0xA0] = E(h_mov_load_moffs, D_BYTE | D_MOFFS, 0, K_ALU),
    [0xA1] = E(h_mov_load_moffs, D_MOFFS, 0, K_ALU),
    [0xA2] = E(h_mov_store_moffs, D_BYTE | D_MOFFS, 0, K_ALU),
    [0xA3] = E(h_mov_store_moffs, D_MOFFS, 0, K_ALU),
    [0xA4] = E(h_movs, D_BYTE, 0, K_DYN), [0xA5] = E(h_movs, 0, 0, K_DYN),
    [0xA6] = E(h_cmps, D_BYTE, 0, K_DYN), [0xA7] = E(h_cmps, 0, 0, K_DYN),
    [0xA8] = E(h_test_rm_imm, D_BYTE | D_IMM8 | D_ACC, 0, K_ALU),
    [0xA9] = E(h_test_rm_imm, D_IMMZ | D_ACC, 0, K_ALU),
    [0xAA] = E(h_stos, D_BYTE, 0, K_DYN), [0xAB] = E(h_stos, 0, 0, K_DYN),
    [0xAC] = E(h_lods, D_BYTE, 0, K_DYN), [0xAD] = E(h_lods, 0, 0, K_DYN),
    [0xAE] = E(h_scas, D_BYTE, 0, K_DYN), [0xAF] = E(h_scas, 0, 0, K_DYN),
    [0xB0] = R8(h_mov_r_imm, D_REGOP | D_BYTE | D_IMM8, K_ALU),
    [0xB8] = R8(h_mov_r_imm, D_REGOP | D_IMMZ, K_ALU),
    [0xC0] = E(h_shift_imm, D_MODRM | D_BYTE | D_IMM8 | D_OPREG, 0, K_ALU),
    [0xC1] = E(h_shift_imm, D_MODRM | D_IMM8 | D_OPREG, 0, K_ALU),
    [0xC2] = E(h_ret, D_IMM16, 0, K_BRANCH), [0xC3] = E(h_ret, 0, 0, K_BRANCH),
    [0xC4] = E(h_lseg, D_MODRM | D_MEMONLY, SEG_ES, K_ALU),
    [0xC5] = E(h_lseg, D_MODRM | D_MEMONLY, SEG_DS, K_ALU),
    [0xC6] = E(NULL, D_MODRM | D_GROUP | D_BYTE, G_11B, K_ALU),
    [0xC7] = E(NULL, D_MODRM | D_GROUP, G_11V, K_ALU),
    [0xC8] = E(h_enter, D_IMM16 | D_IMM8, 0, K_ALU),
    [0xC9] = E(h_leave, 0, 0, K_ALU),
    [0xCA] = E(h_retf, D_IMM16, 0, K_DYN), [0xCB] = E(h_retf, 0, 0, K_DYN),
    [0xCC] = E(h_int3, 0, 0, K_DYN), [0xCD] = E(h_int, D_IMM8, 0, K_DYN),
    [0xCE] = E(h_into, 0, 0, K_DYN), [0xCF] = E(h_iret, 0, 0, K_DYN),
    [0xD0] = E(h_shift_imm, D_MODRM | D_BYTE | D_ONE | D_OPREG, 0, K_ALU),
    [0xD1] = E(h_shift_imm, D_MODRM | D_ONE | D_OPREG, 0, K_ALU),
    [0xD2] = E(h_shift_cl, D_MODRM | D_BYTE | D_OPREG, 0, K_ALU),
    [0xD3] = E(h_shift_cl, D_MODRM | D_OPREG, 0, K_ALU),
    [0xD4] = E(h_aam, D_IMM8, 0, K_DIV), [0xD5] = E(h_aad, D_IMM8, 0, K_MUL),
    [0xD6] = E(h_salc, 0, 0, K_ALU), [0xD7] = E(h_xlat, 0, 0, K_ALU),
    [0xE0] = E(h_loop, D_IMM8, 0, K_DYN), [0xE1] = E(h_loop, D_IMM8, 1, K_DYN),
    [0xE2] = E(h_loop, D_IMM8, 2, K_DYN), [0xE3] = E(h_loop, D_IMM8, 3, K_DYN),
    [0xE4] = E(h_in, D_BYTE | D_IMM8, 0, K_IO), [0xE5] = E(h_in, D_IMM8, 0, K_IO),
    [0xE6] = E(h_out, D_BYTE | D_IMM8, 0, K_IO), [0xE7] = E(h_out, D_IMM8, 0, K_IO),
    [0xE8] = E(h_call_rel, D_IMMZ, 0, K_BRANCH),
    [0xE9] = E(h_jmp_rel, D_IMMZ, 0, K_BRANCH),
    [0xEA] = E(h_jmp_far, D_FARPTR, 0, K_DYN),
    [0xEB] = E(h_jmp_rel, D_IMM8, 0, K_BRANCH),
    [0xEC] = E(h_in, D_BYTE, 1, K_IO), [0xED] = E(h_in, 0, 1, K_IO),
    [0xEE] = E(h_out, D_BYTE, 1, K_IO), [0xEF] = E(h_out, 0, 1, K_IO),
    [0xF4] = E(h_hlt, 0, 0, K_ALU), [0xF5] = E(h_cmc, 0, 0, K_ALU),
    [0xF6] = E(NULL, D_MODRM | D_GROUP | D_BYTE, G_3B, K_ALU),
    [0xF7] = E(NULL, D_MODRM | D_GROUP, G_3V, K_ALU),
    [0xF8] = E(h_clc, 0, 0, K_ALU), [0xF9] = E(h_stc, 0, 0, K_ALU),
    [0xFA] = E(h_cli, 0, 0, K_ALU), [0xFB] = E(h_sti, 0, 0, K_ALU),
    [0xFC] = E(h_cld, 0, 0, K_ALU), [0xFD] = E(h_std, 0, 0, K_ALU),
    [0xFE] = E(NULL, D_MODRM | D_GROUP | D_BYTE, G_4, K_ALU),
    [0xFF] = E(NULL, D_MODRM | D_GROUP, G_5, K_ALU),
};

static const OpDesc op2[256] = {
    [0x00] = E(NULL, D_MODRM | D_GROUP, G_6, K_SERIAL),
    [0x01] = E(NULL, D_MODRM | D_GROUP, G_7, K_SERIAL),
    [0x06] = E(h_clts, 0, 0, K_DYN),             /* charged as a CR0 write */
    [0x08] = E(h_wbinvd, 0, 0, K_SERIAL), [0x09] = E(h_wbinvd, 0, 0, K_SERIAL),
    [0x0B] = E(h_ud, 0, 0, K_ALU),
    [0x0D] = E(h_nop, D_MODRM | D_MEMONLY, 0, K_ALU),
    [0x18] = E(h_nop, D_MODRM | D_MEMONLY, 0, K_ALU),
    [0x1F] = E(h_nop, D_MODRM, 0, K_ALU),
    [0x20] = E(h_mov_r_cr, D_MODRM | D_MODREG, 0, K_ALU),
    [0x22] = E(h_mov_cr_r, D_MODRM | D_MODREG, 0, K_DYN),
    [0x30] = E(h_wrmsr, 0, 0, K_SERIAL), [0x31] = E(h_rdtsc, 0, 0, K_ALU),
    [0x32] = E(h_rdmsr, 0, 0, K_SERIAL),
    [0x34] = E(h_sysenter, 0, 0, K_DYN), [0x35] = E(h_sysexit, 0, 0, K_DYN),
    [0x40] = CC8(h_cmov, D_MODRM, 0, K_ALU),
    [0x48] = CC8(h_cmov, D_MODRM, 8, K_ALU),
    [0x80] = CC8(h_jcc, D_IMMZ, 0, K_DYN),
    [0x88] = CC8(h_jcc, D_IMMZ, 8, K_DYN),
    [0x90] = CC8(h_setcc, D_MODRM | D_BYTE, 0, K_ALU),
    [0x98] = CC8(h_setcc, D_MODRM | D_BYTE, 8, K_ALU),
    [0xA0] = E(h_push_sreg, 0, SEG_FS, K_ALU), [0xA1] = E(h_pop_sreg, 0, SEG_FS, K_ALU),
    [0xA2] = E(h_cpuid, 0, 0, K_SERIAL),
    [0xA3] = E(h_bt_rm_r, D_MODRM, 0, K_ALU),
    [0xA4] = E(h_shld_imm, D_MODRM | D_IMM8, 0, K_ALU),
    [0xA5] = E(h_shld_cl, D_MODRM, 0, K_ALU),
    [0xA8] = E(h_push_sreg, 0, SEG_GS, K_ALU), [0xA9] = E(h_pop_sreg, 0, SEG_GS, K_ALU),
    [0xAB] = E(h_bt_rm_r, D_MODRM, 1, K_ALU),
    [0xAC] = E(h_shrd_imm, D_MODRM | D_IMM8, 0, K_ALU),
    [0xAD] = E(h_shrd_cl, D_MODRM, 0, K_ALU),
    [0xAF] = E(h_imul_r_rm, D_MODRM, 0, K_MUL),
    [0xB0] = E(h_cmpxchg, D_MODRM | D_BYTE, 0, K_ALU),
    [0xB1] = E(h_cmpxchg, D_MODRM, 0, K_ALU),
    [0xB2] = E(h_lseg, D_MODRM | D_MEMONLY, SEG_SS, K_ALU),
    [0xB3] = E(h_bt_rm_r, D_MODRM, 2, K_ALU),
    [0xB4] = E(h_lseg, D_MODRM | D_MEMONLY, SEG_FS, K_ALU),
    [0xB5] = E(h_lseg, D_MODRM | D_MEMONLY, SEG_GS, K_ALU),
    [0xB6] = E(h_movzx, D_MODRM, 1, K_ALU), [0xB7] = E(h_movzx, D_MODRM, 2, K_ALU),
    [0xBA] = E(NULL, D_MODRM | D_GROUP | D_IMM8, G_8, K_ALU),
    [0xBB] = E(h_bt_rm_r, D_MODRM, 3, K_ALU),
    [0xBC] = E(h_bsf, D_MODRM, 0, K_ALU), [0xBD] = E(h_bsr, D_MODRM, 0, K_ALU),
    [0xBE] = E(h_movsx, D_MODRM, 1, K_ALU), [0xBF] = E(h_movsx, D_MODRM, 2, K_ALU),
    [0xC0] = E(h_xadd, D_MODRM | D_BYTE, 0, K_ALU), [0xC1] = E(h_xadd, D_MODRM, 0, K_ALU),
    [0xC7] = E(NULL, D_MODRM | D_GROUP, G_9, K_ALU),
    [0xC8] = R8(h_bswap, D_REGOP, K_ALU),
};

/* Groups: the handler chosen by ModRM.reg (SDM Vol. 2 Table A-6). */
static const OpDesc groups[NGROUPS][8] = {
    [G_3B] = { E(h_test_rm_imm, D_IMM8, 0, K_ALU), E(h_test_rm_imm, D_IMM8, 0, K_ALU),
               E(h_not_rm, 0, 0, K_ALU), E(h_neg_rm, 0, 0, K_ALU),
               E(h_mul_rm, 0, 0, K_MUL), E(h_imul1_rm, 0, 0, K_MUL),
               E(h_div_rm, 0, 0, K_DIV), E(h_idiv_rm, 0, 0, K_DIV) },
    [G_3V] = { E(h_test_rm_imm, D_IMMZ, 0, K_ALU), E(h_test_rm_imm, D_IMMZ, 0, K_ALU),
               E(h_not_rm, 0, 0, K_ALU), E(h_neg_rm, 0, 0, K_ALU),
               E(h_mul_rm, 0, 0, K_MUL), E(h_imul1_rm, 0, 0, K_MUL),
               E(h_div_rm, 0, 0, K_DIV), E(h_idiv_rm, 0, 0, K_DIV) },
    [G_4] = { E(h_inc_rm, 0, 0, K_ALU), E(h_dec_rm, 0, 0, K_ALU) },
    [G_5] = { E(h_inc_rm, 0, 0, K_ALU), E(h_dec_rm, 0, 0, K_ALU),
              E(h_call_rm, 0, 0, K_BRANCH), E(h_call_far_m, D_MEMONLY, 0, K_DYN),
              E(h_jmp_rm, 0, 0, K_BRANCH), E(h_jmp_far_m, D_MEMONLY, 0, K_DYN),
              E(h_push_rm, 0, 0, K_ALU) },
    [G_1A] = { E(h_pop_rm, 0, 0, K_ALU) },
    [G_11B] = { E(h_mov_rm_imm, D_IMM8, 0, K_ALU) },
    [G_11V] = { E(h_mov_rm_imm, D_IMMZ, 0, K_ALU) },
    [G_6] = { E(h_sldt, 0, 0, K_ALU), E(h_str, 0, 0, K_ALU),
              E(h_lldt, 0, 0, K_SERIAL), E(h_ltr, 0, 0, K_SERIAL) },
    [G_7] = { E(h_sgdt, D_MEMONLY, 0, K_ALU), E(h_sidt, D_MEMONLY, 0, K_ALU),
              E(h_lgdt, D_MEMONLY, 0, K_SERIAL), E(h_lidt, D_MEMONLY, 0, K_SERIAL),
              E(h_smsw, 0, 0, K_ALU), E(NULL, 0, 0, K_ALU),
              E(h_lmsw, 0, 0, K_DYN), E(h_invlpg, D_MEMONLY, 0, K_INVLPG) },
    [G_8] = { [4] = E(h_bt_rm_imm, 0, 0, K_ALU), E(h_bt_rm_imm, 0, 1, K_ALU),
              E(h_bt_rm_imm, 0, 2, K_ALU), E(h_bt_rm_imm, 0, 3, K_ALU) },
    [G_9] = { [1] = E(h_cmpxchg8b, D_MEMONLY, 0, K_ALU) },
};

static uint16_t cost_cycles(const Cpu *c, unsigned k)
{
    switch (k) {
    case K_ALU: return (uint16_t)c->cost.alu;
    case K_MUL: return (uint16_t)c->cost.mul;
    case K_DIV: return (uint16_t)c->cost.div;
    case K_BRANCH: return (uint16_t)c->cost.branch;
    case K_SERIAL: return (uint16_t)c->cost.serializing;
    case K_IO: return (uint16_t)c->cost.io;
    case K_INVLPG: return (uint16_t)c->cost.invlpg;
    default: return 0;           /* K_DYN: the handler charges */
    }
}

int cpu_fetch_ref(Cpu *c, uint32_t lin)
{
    uint64_t pa;
    MmuFault f;
    if (UNLIKELY(!mmu_translate_fast(c->mmu, lin, ACCESS_EXEC, c->cpl, &pa, &f)))
        return cpu_raise_mmu(c, &f);
    c->fetch_blk = lin & ~(FETCH_BLOCK - 1);
    c->fetch_page = lin & ~(PAGE_SIZE - 1);
    /* Host pointer of the frame: looked up again only when the frame
     * changes or was never written (NULL: it may have been allocated since). */
    if ((pa & PAGE_MASK) != c->fetch_pa || !c->fetch_host) {
        c->fetch_pa = pa & PAGE_MASK;
        c->fetch_host = physmem_frame_peek(c->pm, pa);
    }
    return XR_OK;
}

typedef struct {
    Cpu *c;
    uint32_t start, pos;         /* offsets in CS */
    const uint8_t *host;         /* quiet mode: the page's bytes, no references */
} Fetcher;

static int fetch8(Fetcher *f, uint32_t *out)
{
    Cpu *c = f->c;
    if (f->pos - f->start >= 15)
        return cpu_gp0(c);       /* longer than 15 bytes (SDM Vol. 2A §2.3.11) */
    if (f->host) {               /* cpu_decode_quiet: stay in the page */
        uint32_t lin = c->seg[SEG_CS].base + f->pos;
        if ((lin ^ (c->seg[SEG_CS].base + f->start)) & ~(PAGE_SIZE - 1))
            return XR_FAULT;
        *out = f->host[lin & (PAGE_SIZE - 1)];
        f->pos++;
        return XR_OK;
    }
    const SegCache *cs = &c->seg[SEG_CS];
    if (UNLIKELY(!(cs->flags & SEGF_FLAT_R) && f->pos > cs->limit))
        return cpu_gp0(c);
    uint32_t lin = cs->base + f->pos;
    if ((lin & ~(FETCH_BLOCK - 1)) != c->fetch_blk)
        TRY(cpu_fetch_ref(c, lin));
    if (!c->fetch_host)          /* a frame never written reads as zeros, until it is */
        c->fetch_host = physmem_frame_peek(c->pm, c->fetch_pa);
    *out = c->fetch_host ? c->fetch_host[lin & (PAGE_SIZE - 1)] : 0;
    f->pos++;
    return XR_OK;
}

static int fetchn(Fetcher *f, unsigned n, uint32_t *out)
{
    uint32_t v = 0, b;
    for (unsigned k = 0; k < n; k++) {
        TRY(fetch8(f, &b));
        v |= b << (8 * k);
    }
    *out = v;
    return XR_OK;
}

/* Fetch an immediate of n bytes, sign-extended to 32 bits. */
static int fetch_simm(Fetcher *f, unsigned n, uint32_t *out)
{
    uint32_t v;
    TRY(fetchn(f, n, &v));
    if (n == 1)
        v = (uint32_t)(int32_t)(int8_t)v;
    else if (n == 2)
        v = (uint32_t)(int32_t)(int16_t)v;
    *out = v;
    return XR_OK;
}

/* ModRM (and SIB, displacement) with 32-bit addressing. */
static int decode_modrm(Fetcher *f, Insn *d, unsigned modrm, bool *ss_default)
{
    unsigned mod = modrm >> 6, rm = modrm & 7;
    d->reg = (modrm >> 3) & 7;
    if (mod == 3) {
        d->mem = 0;
        d->rm = (uint8_t)rm;
        return XR_OK;
    }
    d->mem = 1;
    d->base = (uint8_t)rm;
    d->index = REG_NONE;
    d->scale = 0;
    if (rm == 4) {
        uint32_t sib;
        TRY(fetch8(f, &sib));
        unsigned idx = (sib >> 3) & 7;
        d->scale = (uint8_t)(sib >> 6);
        d->index = idx == 4 ? REG_NONE : (uint8_t)idx;
        d->base = (uint8_t)(sib & 7);
        if (d->base == REG_EBP && mod == 0)
            d->base = REG_NONE;          /* disp32, no base */
    } else if (rm == 5 && mod == 0) {
        d->base = REG_NONE;              /* disp32 */
    }
    *ss_default = d->base == REG_ESP || d->base == REG_EBP;
    uint32_t disp = 0;
    if (mod == 1)
        TRY(fetch_simm(f, 1, &disp));
    else if (mod == 2 || d->base == REG_NONE)
        TRY(fetchn(f, 4, &disp));
    d->disp = disp;
    return XR_OK;
}

typedef struct {
    unsigned opsize;             /* 2 with 0x66, else 4 */
    int segov;                   /* segment override, -1 if none */
    bool addr16;                 /* 0x67 */
} Prefixes;

/* Prefixes, then the first opcode byte in *b. */
static int decode_prefixes(Fetcher *f, Insn *d, Prefixes *p, uint32_t *b)
{
    *p = (Prefixes){ .opsize = 4, .segov = -1 };
    for (;;) {
        TRY(fetch8(f, b));
        switch (*b) {
        case 0x66: p->opsize = 2; break;
        case 0x67: p->addr16 = true; break;
        case 0x26: p->segov = SEG_ES; break;
        case 0x2E: p->segov = SEG_CS; break;
        case 0x36: p->segov = SEG_SS; break;
        case 0x3E: p->segov = SEG_DS; break;
        case 0x64: p->segov = SEG_FS; break;
        case 0x65: p->segov = SEG_GS; break;
        case 0xF0: break;                            /* LOCK: accepted */
        case 0xF2: d->rep = REP_NE; break;
        case 0xF3: d->rep = REP_E; break;
        default: return XR_OK;
        }
    }
}

/* Memory offset, immediates and far pointers, in instruction order. */
static int decode_immediates(Fetcher *f, Insn *d, unsigned flags, unsigned opsize)
{
    uint32_t v;
    if (flags & D_MOFFS) {
        d->mem = 1;
        TRY(fetchn(f, 4, &d->disp));
    }
    if (flags & D_IMM16) {
        TRY(fetchn(f, 2, &v));
        d->imm2 = (uint16_t)v;
    }
    if (flags & D_FARPTR) {
        TRY(fetchn(f, opsize, &d->imm));
        TRY(fetchn(f, 2, &v));
        d->imm2 = (uint16_t)v;
    }
    if (flags & D_IMM8)
        TRY(fetch_simm(f, 1, &d->imm));
    if (flags & D_IMMZ)
        TRY(fetch_simm(f, opsize, &d->imm));
    if (flags & D_ONE)
        d->imm = 1;
    return XR_OK;
}

static int decode_with(Cpu *c, Fetcher f, Insn *d)
{
    uint32_t eip = f.start;
    memset(d, 0, sizeof *d);
    Prefixes px;
    uint32_t b;
    TRY(decode_prefixes(&f, d, &px, &b));
    unsigned opsize = px.opsize;
    const OpDesc *od = &op1[b];
    if (b == 0x0F) {
        TRY(fetch8(&f, &b));
        od = &op2[b];
    }
    if (!od->fn && !(od->flags & D_GROUP))
        return cpu_ud(c);
    if (px.addr16)
        return cpu_ud(c);        /* 16-bit addressing is not implemented */

    unsigned flags = od->flags, cost = od->cost;
    InsnFn fn = od->fn;
    d->op = od->op;
    d->base = d->index = REG_NONE;
    bool ss_default = false;
    if (flags & D_MODRM) {
        uint32_t modrm;
        TRY(fetch8(&f, &modrm));
        if (flags & D_MODREG)
            modrm |= 0xC0;
        TRY(decode_modrm(&f, d, modrm, &ss_default));
        if (flags & D_GROUP) {
            const OpDesc *g = &groups[od->op][d->reg];
            if (!g->fn)
                return cpu_ud(c);
            fn = g->fn;
            d->op = g->op;
            flags |= g->flags;
            cost = g->cost;
        }
        if (flags & D_OPREG)
            d->op = d->reg;
        if ((flags & D_MEMONLY) && !d->mem)
            return cpu_ud(c);
        if ((flags & D_REGONLY) && d->mem)
            return cpu_ud(c);
    }
    d->size = (uint8_t)((flags & D_BYTE) ? 1 : opsize);
    if (flags & D_REGOP)
        d->reg = b & 7;
    if (flags & D_ACC) {
        d->mem = 0;
        d->rm = REG_EAX;
    }
    TRY(decode_immediates(&f, d, flags, opsize));
    d->seg = (uint8_t)(px.segov >= 0 ? px.segov : ss_default ? SEG_SS : SEG_DS);
    d->fn = fn;
    d->len = (uint8_t)(f.pos - eip);
    d->cost = cost_cycles(c, cost);
    cpu_specialize(d);
    return XR_OK;
}

int cpu_decode(Cpu *c, uint32_t eip, Insn *d)
{
    return decode_with(c, (Fetcher){ c, eip, eip, NULL }, d);
}

int cpu_decode_quiet(Cpu *c, uint32_t eip, const uint8_t *page, Insn *d)
{
    return decode_with(c, (Fetcher){ c, eip, eip, page }, d);
}
