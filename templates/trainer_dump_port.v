{#- Shared by es_top.v and fb_top.v (askama include: n is the network plan, t the trainer plan). -#}
{#- The co-simulation-only port dump_final. -#}
`ifdef FPTGEN_DUMP_FINAL
    ,
    // co-simulation only (the training harness's build defines FPTGEN_DUMP_FINAL):
    // high on a rising edge, every trainable memory writes sim/run/<image>.final
    input  wire dump_final
`endif