{#- The requantizer (fptgen_requant_vec) of an int8 layer: r.lanes int32
    values per beat from the stream <rq_src>_* to the module's out_*. -#}
fptgen_requant_vec #(
    .N({= r.lanes =}),
    .ROUNDING({= r.rounding =}),  // {= r.rounding_name =} rounding
    .OUT_W(8),
    .OUT_ZP({= r.out_zp =}),
    .ACT_MIN({= r.act_min =}),
    .ACT_MAX({= r.act_max =}),
    // {= r.summary =}
    .MULTS({= r.mults =}),
    .SHIFTS({= r.shifts =})
) u_requant (
    .clk(clk),
    .rst(rst),
    .in_data({= rq_src =}_data),
    .in_valid({= rq_src =}_valid),
    .in_ready({= rq_src =}_ready),
    .out_data(out_data),
    .out_valid(out_valid),
    .out_ready(out_ready)
);
