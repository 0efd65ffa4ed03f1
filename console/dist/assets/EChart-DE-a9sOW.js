import{_ as o}from"./EChart.vue_vue_type_script_setup_true_lang-CA4ysn4u.js";import"./echarts-JDBXm0_P.js";/* empty css           */import"./index-cKJXanrh.js";export{o as default};
