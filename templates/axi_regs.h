{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * The AXI4-Lite register map of {= a.module =} (driver/registers.md): byte
 * offsets, field bits and constants, for software and the co-simulation.
 */

#ifndef {= a.upper() =}_REGS_H
#define {= a.upper() =}_REGS_H

/* Registers (byte offsets) */
{%- for r in a.regs %}
#define {= a.upper() =}_REG_{= r.name =} 0x{= "{:03x}"|format(r.offset) =}u /* {= r.access =}: {= r.desc =} */
{%- endfor %}

/* Constant values */
#define {= a.upper() =}_ID_VALUE 0x{= a.hex32("id") =}u
#define {= a.upper() =}_VERSION_VALUE 0x{= a.hex32("version") =}u
#define {= a.upper() =}_INPUTS {= a.inputs =}u
#define {= a.upper() =}_OUTPUTS {= a.outputs =}u
#define {= a.upper() =}_IN_WIDTH {= a.in_w =}u /* bits of an input element */
#define {= a.upper() =}_OUT_WIDTH {= a.out_w =}u /* bits of an output element */
#define {= a.upper() =}_S_AXIS_BYTES {= a.bus_in / 8 =}u /* s_axis TDATA bytes */
#define {= a.upper() =}_S_AXIS_TRANSFERS {= a.in_k * a.core_in_beats =}u /* s_axis transfers per input vector */
#define {= a.upper() =}_M_AXIS_BYTES {= a.bus_out / 8 =}u /* m_axis TDATA bytes */
#define {= a.upper() =}_M_AXIS_TRANSFERS {= a.out_k * a.core_out_beats =}u /* m_axis transfers per output vector */
{%- if let Some(t) = a.trainer %}

/* CONTROL bits (write 1: a one-cycle pulse) */
#define {= a.upper() =}_CONTROL_START 0x1u
#define {= a.upper() =}_CONTROL_PAUSE 0x2u
#define {= a.upper() =}_CONTROL_RESUME 0x4u

/* STATUS bits */
#define {= a.upper() =}_STATUS_BUSY 0x1u
#define {= a.upper() =}_STATUS_PAUSED 0x2u
#define {= a.upper() =}_STATUS_DONE 0x4u
#define {= a.upper() =}_STATUS_WEIGHTS 0x8u /* weights readable now: not busy, or paused */
#define {= a.upper() =}_STATUS_WEIGHTS_WRITE 0x10u /* weights writable now: not busy */

/* Sample-load stream (s_axis_ld): one transfer per buffer word */
#define {= a.upper() =}_LD_BYTES {= t.ld_bus / 8 =}u /* TDATA bytes */
#define {= a.upper() =}_LD_WORD_BITS {= t.word_w =}u /* input bits per transfer, at TDATA bit 0 */
#define {= a.upper() =}_LD_WORDS {= t.words =}u /* transfers per sample */
#define {= a.upper() =}_LD_TARGET_AT {= t.target_at =}u /* TDATA bit of the target (read with a sample's last transfer) */
#define {= a.upper() =}_LD_TARGET_BITS {= t.target_w =}u
#define {= a.upper() =}_BUFFER {= t.m =}u /* samples the buffer holds */

/* Trainable tensors, in training order: column c of word w at
 * BASE + ((w << COL_BITS) | c) * 4, sign- (SIGNED) or zero-extended */
#define {= a.upper() =}_TENSORS {= t.windows.len() =}u
{%- for w in t.windows %}
#define {= a.upper() =}_{= w.upper() =} {= w.t.index =}u /* {= w.t.layer =} {= w.t.role =}, {= w.t.count =} parameters, image {= w.file =} */
#define {= a.upper() =}_{= w.upper() =}_BASE 0x{= "{:x}"|format(w.base) =}u
#define {= a.upper() =}_{= w.upper() =}_DEPTH {= w.depth =}u
#define {= a.upper() =}_{= w.upper() =}_COLS {= w.mem_cols =}u
#define {= a.upper() =}_{= w.upper() =}_COL_BITS {= w.t.col_w =}u
#define {= a.upper() =}_{= w.upper() =}_WIDTH {= w.t.width =}u
#define {= a.upper() =}_{= w.upper() =}_SIGNED {% if w.t.signed %}1{% else %}0{% endif %}
{%- endfor %}
{%- endif %}

#endif /* {= a.upper() =}_REGS_H */
