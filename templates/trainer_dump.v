{#- Shared by es_top.v and fb_top.v (askama include: n is the network plan, t the trainer plan). -#}
{#- Co-simulation only: dump every trainable memory. -#}
`ifdef FPTGEN_DUMP_FINAL
// ---------------------------------------------------------------------------
// Co-simulation only: the training harness raises dump_final for one cycle
// before it ends, and every trainable memory writes its contents
// (fptgen_param_mem's copy tasks gather the words of the memory or of each
// of its banks, then its write_final task writes them), which fptgen cosim
// --train compares with the simulator's trained parameters.
always @(posedge clk) begin
    if (dump_final) begin
{%- for x in t.tensors %}
{%- for b in 0..x.banks %}
        u_net.u_{= x.layer =}.{= x.instance =}.g_bank[{= b =}].copy;
{%- endfor %}
        u_net.u_{= x.layer =}.{= x.instance =}.write_final;
{%- endfor %}
    end
end
`endif
