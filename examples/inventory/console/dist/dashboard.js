import { defineComponent as D, ref as m, computed as h, onMounted as N, openBlock as s, createElementBlock as k, createElementVNode as p, toDisplayString as i, unref as e, createVNode as l, withCtx as r, createTextVNode as b, createBlock as f, Fragment as V, createCommentVNode as $, withDirectives as I } from "/console-kit/vue.js";
import { ElButton as g, ElAlert as L, ElTable as F, ElTableColumn as u, ElTag as M } from "/console-kit/element-plus.js";
import { loadCss as O, useI18n as P, EChart as S, vAuth as W, api as x, errorText as E, notify as C } from "/console-kit/kit.js";
const j = {
  class: "inv-dashboard",
  "data-test": "inventory-dashboard"
}, q = { class: "inv-head" }, z = {
  class: "inv-summary",
  "data-test": "inventory-summary"
}, w = 5, R = /* @__PURE__ */ D({
  __name: "DashboardPage",
  setup(G) {
    O(import.meta.url.replace(/[^/]*$/, "dashboard.css"));
    const { t } = P(), o = m([]), d = m(""), v = m(!1);
    async function y() {
      v.value = !0, d.value = "";
      try {
        o.value = await x.get("/api/v1/inventory/items");
      } catch (a) {
        d.value = E(a);
      } finally {
        v.value = !1;
      }
    }
    async function T(a) {
      try {
        await x.del(`/api/v1/inventory/items/${a.id}`), C.success(t("inventory.dashboard.deleted", { name: a.name })), await y();
      } catch (c) {
        C.error(E(c));
      }
    }
    const A = h(() => o.value.reduce((a, c) => a + c.stock, 0)), B = h(() => ({
      grid: { left: 40, right: 16, top: 24, bottom: 32 },
      xAxis: { type: "category", data: o.value.map((a) => a.name) },
      yAxis: { type: "value", minInterval: 1 },
      series: [{ type: "bar", name: t("inventory.dashboard.stock"), data: o.value.map((a) => a.stock), label: { show: !0, position: "top" } }]
    })), _ = h(() => t("inventory.dashboard.summary", { items: o.value.length, total: A.value }));
    return N(y), (a, c) => (s(), k("section", j, [
      p("header", q, [
        p("h2", null, i(e(t)("inventory.dashboard.title")), 1),
        l(e(g), {
          loading: v.value,
          "data-test": "inventory-refresh",
          onClick: y
        }, {
          default: r(() => [
            b(i(e(t)("inventory.dashboard.refresh")), 1)
          ]),
          _: 1
        }, 8, ["loading"])
      ]),
      d.value ? (s(), f(e(L), {
        key: 0,
        title: d.value,
        type: "error",
        closable: !1,
        "show-icon": ""
      }, null, 8, ["title"])) : (s(), k(V, { key: 1 }, [
        p("p", z, i(_.value), 1),
        o.value.length ? (s(), f(e(S), {
          key: 0,
          option: B.value,
          label: _.value
        }, null, 8, ["option", "label"])) : $("", !0),
        l(e(F), {
          data: o.value,
          "empty-text": e(t)("inventory.dashboard.empty"),
          "data-test": "inventory-table"
        }, {
          default: r(() => [
            l(e(u), {
              prop: "name",
              label: e(t)("inventory.dashboard.name")
            }, null, 8, ["label"]),
            l(e(u), {
              prop: "stock",
              label: e(t)("inventory.dashboard.stock"),
              width: "120"
            }, null, 8, ["label"]),
            l(e(u), {
              label: e(t)("inventory.dashboard.status"),
              width: "140"
            }, {
              default: r(({ row: n }) => [
                l(e(M), {
                  type: n.stock === 0 ? "danger" : n.stock < w ? "warning" : "success",
                  "disable-transitions": ""
                }, {
                  default: r(() => [
                    b(i(e(t)(n.stock === 0 ? "inventory.dashboard.out" : n.stock < w ? "inventory.dashboard.low" : "inventory.dashboard.ok")), 1)
                  ]),
                  _: 2
                }, 1032, ["type"])
              ]),
              _: 1
            }, 8, ["label"]),
            l(e(u), { width: "120" }, {
              default: r(({ row: n }) => [
                I((s(), f(e(g), {
                  text: "",
                  type: "danger",
                  "data-test": `inventory-delete-${n.id}`,
                  onClick: (H) => T(n)
                }, {
                  default: r(() => [
                    b(i(e(t)("inventory.dashboard.delete")), 1)
                  ]),
                  _: 1
                }, 8, ["data-test", "onClick"])), [
                  [e(W), "DELETE:/api/v1/inventory/items/{id}"]
                ])
              ]),
              _: 1
            })
          ]),
          _: 1
        }, 8, ["data", "empty-text"])
      ], 64))
    ]));
  }
});
export {
  R as default
};
