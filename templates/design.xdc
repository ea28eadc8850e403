{% import "macros.txt" as m -%}
{% call m::header("#", gen) %}{% endcall %}
#
# Out-of-context timing constraints of {= n.name =} for {= n.part =}
# (constraints/README.md in the fptgen repository explains each line).

# The clock: the model's clock_period_ns ({= fmt3(n.clock_period_ns) =} ns, {= fmt1(n.clock_mhz()) =} MHz).
create_clock -name clk -period {= fmt3(n.clock_period_ns) =} [get_ports clk]

# Every other port is synchronous to clk. Out of context, the logic that
# drives the inputs and takes the outputs is unknown: give it {= io_percent =}% of the
# period on each side, leaving the rest to this block.
set_input_delay -clock clk {= fmt3(io_delay_ns) =} [get_ports -filter {DIRECTION == IN && NAME != "clk"}]
set_output_delay -clock clk {= fmt3(io_delay_ns) =} [get_ports -filter {DIRECTION == OUT}]
{%- if n.trainer.is_some() %}

# The ES trainer needs no false or multicycle path: every register-to-
# register path of rtl/fptgen_es_ctrl.v and its blocks is a single-cycle
# path in the clk domain. cfg_iterations is sampled only when training
# starts; if it comes from another clock domain, synchronize it outside.
{%- endif %}
