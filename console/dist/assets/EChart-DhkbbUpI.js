import{_ as o}from"./EChart.vue_vue_type_script_setup_true_lang-DBCLNowq.js";import"./echarts-JDBXm0_P.js";/* empty css           */import"./index-BedIIOnU.js";export{o as default};
