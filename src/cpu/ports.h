/* The I/O port space of one core (IN, OUT and the string forms). Other
 * modules register hooks for port ranges: the `vmsplit run` environment's
 * hypercall port, later the kernel model's. A port nobody registered reads
 * as all ones and ignores writes, as an unconnected ISA port does.
 *
 * Privilege (SDM Vol. 1 §18.5): at CPL > IOPL an access is allowed only if
 * the I/O permission bitmap of the current TSS clears every bit of the
 * accessed ports; the core checks that before calling a hook. */
#ifndef VMSPLIT_CPU_PORTS_H
#define VMSPLIT_CPU_PORTS_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/cpu.h"

typedef enum {
    PORT_OK,                     /* done, continue */
    PORT_STOP,                   /* done; stop cpu_run with CPU_STOP_EXIT */
} PortResult;

/* size is 1, 2 or 4. The hook may read and write guest registers and
 * memory through the cpu_* API (e.g. a hypercall reading EBX/ECX/EDX). */
typedef PortResult (*PortInFn)(Cpu *cpu, uint16_t port, unsigned size,
                               uint32_t *val, void *user);
typedef PortResult (*PortOutFn)(Cpu *cpu, uint16_t port, unsigned size,
                                uint32_t val, void *user);

/* Register hooks for ports [first, first + count). Either hook may be NULL
 * (then that direction behaves as unconnected). A later registration
 * overlapping an earlier one takes precedence. */
void cpu_port_register(Cpu *cpu, uint16_t first, unsigned count, PortInFn in,
                       PortOutFn out, void *user);

#endif
