// The policyrun playground: the policy and the input go to policyrunRun,
// the compiler and VM built to WebAssembly (playground/wasm), on every
// edit; the page shows its diagnostics, the output records and each
// record's outcome. The URL's fragment, #policy=<base64url>&input=<base64url>,
// carries the policy and the input (and the module tab, its name and the
// parameters, when they are not empty): opening such a link shows the
// result.
"use strict";

const EXAMPLES = [
  {
    name: "drop, set, if",
    policy: `# Drop debug lines, name the service, and flag server errors.
policy "playground"

schema {
  level: string
  msg: string
  status: int?
  ...
}

drop when .level == "debug"
set .service = "checkout"
if (.status ?? 0) >= 500 {
  set .level = "error"
  set .alert = true
}
`,
    input: `{"level":"debug","msg":"cache miss"}
{"level":"info","msg":"GET /cart","status":200}
{"level":"info","msg":"POST /pay","status":503}
{"level":"info","msg":"GET /","status":"200"}
`,
  },
  {
    name: "Kubernetes: parse and lift",
    policy: `# Lift the Kubernetes metadata to the top level, name the app, parse the
# application's own JSON line, and drop what nobody reads.
policy "k8s-lift"

schema {
  log: string
  kubernetes: {
    pod_name: string
    container_name: string
    labels: map<string>
    annotations: map<string>
    ...
  }
  ...
}

drop when contains(.log, "/healthz")

let app = as_map(parse_json(.log)) ?? {}
let level = as_string(app["level"]) ?? "unknown"
drop when level == "debug"

set .level = level
set .status = as_int(app["status"]) ?? 0
set .app = .kubernetes.labels["app.kubernetes.io/name"] ?? .kubernetes.container_name
remove .kubernetes.annotations, .kubernetes.labels
lift .kubernetes prefix "k8s_"
`,
    input: `{"log":"{\\"level\\":\\"info\\",\\"status\\":200}","kubernetes":{"pod_name":"web-1","container_name":"web","labels":{"app.kubernetes.io/name":"storefront"},"annotations":{}}}
{"log":"GET /healthz 200","kubernetes":{"pod_name":"web-1","container_name":"web","labels":{},"annotations":{}}}
{"log":"not json","kubernetes":{"pod_name":"w-2","container_name":"worker","labels":{},"annotations":{}}}
`,
  },
  {
    name: "OTLP log records",
    policy: `# An OTLP policy: its records are OTLP views (docs/otlp.md).
policy "otlp-example"

schema otlp {
  attributes: {
    "http.response.status_code": int?
    ...
  }
  resource: {
    attributes: {
      "service.name": string?
      ...
    }
  }
}

drop when .severity_number < 9
set .attributes.service = .resource.attributes."service.name" ?? "unknown"
if (.attributes."http.response.status_code" ?? 0) >= 500 {
  set .severity_number = 17
  set .severity_text = "ERROR"
}
`,
    input: `{"severity_number":5,"body":"cache warm"}
{"severity_number":9,"body":"GET /pay","attributes":{"http.response.status_code":503},"resource":{"attributes":{"service.name":"checkout"}}}
{"severity_number":9,"body":"GET /","attributes":{"http.response.status_code":200}}
`,
  },
  {
    name: "a type error (E0301)",
    policy: `policy "checkout"

schema {
  status: int
  ...
}

drop when .status == "500"
`,
    input: `{"status":500}
`,
  },
];

const PII_MODULE = `module "pii"

const card = \`\\b\\d(?:[ -]?\\d){12,15}\\b\`

fn mask_card(s: string) string {
  return replace_re(s, card, "[card]")
}

fn mask_ip(ip: string, keep: int = 3) string {
  let parts = split(ip, ".")
  if len(parts) != 4 {
    return ip
  }
  return join(slice(parts, 0, keep), ".") + ".0"
}

test "masks" {
  assert mask_ip("10.1.2.3") == "10.1.2.0"
}
`;

EXAMPLES.push({
  name: "a module and parameters",
  policy: `# Import the module of the Module tab; the Parameters tab gives keep.
policy "web"

import "pii.policy"

schema {
  msg: string
  ip: string
  ...
}

param keep: int = 3

set .msg = pii.mask_card(.msg)
set .ip = pii.mask_ip(.ip, keep)
`,
  input: `{"msg":"paid with 4111 1111 1111 1111","ip":"10.1.2.3"}
`,
  module: PII_MODULE,
  params: `keep=2
`,
});

const $ = (id) => document.getElementById(id);
const policyEl = $("policy"), inputEl = $("input");
const moduleEl = $("module"), moduleNameEl = $("module-name"), paramsEl = $("params");
let ready = false;
let timer = 0;

// base64url of the UTF-8 bytes of s, without padding.
function encode(s) {
  const bytes = new TextEncoder().encode(s);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// decode is the inverse of encode; it takes padding and the standard
// alphabet too.
function decode(b64) {
  let s = b64.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  s += "=".repeat((4 - (s.length % 4)) % 4);
  const bin = atob(s);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

function shareHash() {
  let h = "#policy=" + encode(policyEl.value) + "&input=" + encode(inputEl.value);
  if (moduleEl.value !== "") h += "&module=" + encode(moduleEl.value) + "&modname=" + encode(moduleNameEl.value);
  if (paramsEl.value !== "") h += "&params=" + encode(paramsEl.value);
  return h;
}

// linkError says why the URL's fragment could not be read, "" when it
// could (or had no policy): shown with the first run's status, which
// would otherwise replace it.
let linkError = "";

// fromHash fills the editors from the URL's fragment; false when it
// carries no policy, or one that cannot be read (linkError says why).
// Many tools percent-encode a link's base64 padding (%3D): the values are
// percent-decoded first.
function fromHash() {
  const params = {};
  for (const part of location.hash.replace(/^#/, "").split("&")) {
    const i = part.indexOf("=");
    if (i > 0) params[part.slice(0, i)] = part.slice(i + 1);
  }
  if (params.policy === undefined) return false;
  try {
    const policy = decode(decodeURIComponent(params.policy));
    const opt = (k, d) => (params[k] !== undefined ? decode(decodeURIComponent(params[k])) : d);
    const input = opt("input", "");
    const module = opt("module", ""), modname = opt("modname", "pii.policy"), ps = opt("params", "");
    policyEl.value = policy;
    inputEl.value = input;
    moduleEl.value = module;
    moduleNameEl.value = modname;
    paramsEl.value = ps;
  } catch (e) {
    linkError = "the link's policy or input cannot be read (" + e.message + "): showing the example instead";
    setStatus(linkError, true);
    return false;
  }
  linkError = "";
  return true;
}

function setStatus(text, error) {
  const s = $("status");
  s.textContent = text;
  s.classList.toggle("error", !!error);
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// inPolicy says the diagnostic d is in the policy, not in the module.
const inPolicy = (d) => !d.file || d.file === "playground.policy";

function gutter(diags) {
  const n = policyEl.value.split("\n").length;
  const marks = {};
  for (const d of diags.filter(inPolicy)) {
    if (marks[d.line] !== "bad") marks[d.line] = d.severity === "error" ? "bad" : "warn";
  }
  const g = $("gutter");
  g.replaceChildren();
  for (let i = 1; i <= n; i++) {
    const line = el("span", marks[i] || "", String(i));
    if (marks[i]) line.title = diags.filter((d) => inPolicy(d) && d.line === i).map((d) => d.code + " " + d.message).join("\n");
    g.append(line, "\n");
  }
  g.scrollTop = policyEl.scrollTop;
}

function show(res) {
  if (res.error) {
    setStatus(res.error, true);
    return;
  }
  // Diagnostics.
  const list = $("diagnostics");
  list.replaceChildren();
  const errors = res.diagnostics.filter((d) => d.severity === "error").length;
  const warnings = res.diagnostics.length - errors;
  $("diag-count").textContent = `${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}`;
  if (res.diagnostics.length === 0) list.append(el("li", "none", "The policy checks: no errors, no warnings."));
  for (const d of res.diagnostics) {
    const li = el("li", d.severity);
    li.dataset.code = d.code;
    li.append(el("span", "severity", d.severity + " "), el("span", "code", d.code),
      el("span", "pos", (inPolicy(d) ? "" : d.file + ":") + `${d.line}:${d.col}`), el("span", "message", d.message));
    if (d.label) li.append(el("span", "label", d.label));
    if (d.hint) li.append(el("span", "hint", d.hint));
    const where = inPolicy(d) ? policyEl : moduleEl;
    li.title = inPolicy(d) ? "select it in the policy" : "select it in the module";
    li.addEventListener("click", () => {
      where.focus();
      where.setSelectionRange(d.from, Math.max(d.to, d.from + 1));
    });
    list.append(li);
  }
  $("diag-text").textContent = res.text;
  $("diag-text-box").hidden = res.text === "";
  gutter(res.diagnostics);

  // The input's kind, the output and the outcomes.
  $("input-label").textContent = res.otlp ? "Input records (OTLP views)" : "Input records";
  $("input-note").textContent = res.otlp
    ? "one OTLP LogRecord view per line, as policyrun eval reads them for a schema otlp policy"
    : "JSON, one record per line";
  const out = $("output");
  if (res.ran) {
    out.textContent = res.output.join("\n");
    $("summary").textContent = res.summary;
  } else {
    out.textContent = "";
    $("summary").textContent = "not run: the policy has errors";
  }
  const body = $("records").tBodies[0];
  body.replaceChildren();
  for (const r of res.records) {
    const tr = el("tr");
    let outcome = r.action === "pass" ? "malformed, passed through" : r.action === "drop" ? "dropped" : "kept";
    let cls = r.action;
    if (r.fault) {
      outcome = "fault " + r.fault + (r.action === "drop" ? ", dropped" : ", kept as it came");
      cls = "fault";
    }
    tr.append(el("td", "", String(r.line)), el("td", cls, outcome), el("td", "", r.error || r.output || ""));
    body.append(tr);
  }

  setStatus(res.ran ? `ran ${res.name ? '"' + res.name + '"' : "the policy"} on the VM` : "the policy has errors");
  if (linkError) {
    setStatus(linkError, true);
    linkError = ""; // once: the next run is the user's
  }
  document.body.dataset.state = res.ran ? "ran" : "errors";
  document.body.dataset.runs = String(Number(document.body.dataset.runs) + 1);
}

function run() {
  clearTimeout(timer);
  if (!ready) return;
  const hash = shareHash();
  $("share").value = location.href.replace(/#.*$/, "") + hash;
  if (location.hash !== hash) history.replaceState(null, "", hash);
  let res;
  try {
    const modules = moduleEl.value === "" ? {} : { [moduleNameEl.value]: moduleEl.value };
    res = JSON.parse(globalThis.policyrunRun(policyEl.value, inputEl.value, JSON.stringify(modules), paramsEl.value));
  } catch (e) {
    setStatus("the engine failed: " + e.message, true);
    document.body.dataset.state = "failed";
    return;
  }
  show(res);
}

function later() {
  clearTimeout(timer);
  timer = setTimeout(run, 150);
}

async function start() {
  const select = $("example");
  const custom = new Option("(your own)", "");
  custom.disabled = true;
  select.append(custom);
  EXAMPLES.forEach((ex, i) => select.append(new Option(ex.name, String(i))));
  // The menu names the example shown, if the editors hold one.
  const which = () => {
    const i = EXAMPLES.findIndex((ex) => ex.policy === policyEl.value && ex.input === inputEl.value &&
      (ex.module || "") === moduleEl.value && (ex.params || "") === paramsEl.value);
    select.value = i < 0 ? "" : String(i);
  };
  select.addEventListener("change", () => {
    const ex = EXAMPLES[Number(select.value)];
    policyEl.value = ex.policy;
    inputEl.value = ex.input;
    moduleEl.value = ex.module || "";
    paramsEl.value = ex.params || "";
    if (ex.module) moduleNameEl.value = "pii.policy";
    run();
  });
  if (!fromHash()) {
    policyEl.value = EXAMPLES[0].policy;
    inputEl.value = EXAMPLES[0].input;
  }
  which();
  gutter([]);
  for (const e of [policyEl, inputEl, moduleEl, moduleNameEl, paramsEl]) {
    e.addEventListener("input", () => { which(); later(); });
  }
  policyEl.addEventListener("scroll", () => { $("gutter").scrollTop = policyEl.scrollTop; });
  const cursor = () => {
    const before = policyEl.value.slice(0, policyEl.selectionStart).split("\n");
    $("cursor").textContent = `line ${before.length}, column ${before[before.length - 1].length + 1}`;
  };
  policyEl.addEventListener("keyup", cursor);
  policyEl.addEventListener("click", cursor);
  policyEl.addEventListener("keydown", (e) => {
    if (e.key === "Tab" && !e.shiftKey && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      policyEl.setRangeText("  ", policyEl.selectionStart, policyEl.selectionEnd, "end");
      later();
    } else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      run();
    }
  });
  $("run").addEventListener("click", run);
  $("copy").addEventListener("click", async () => {
    $("share").select();
    try {
      await navigator.clipboard.writeText($("share").value);
      setStatus("the share link is copied");
    } catch (e) {
      setStatus("select the link and copy it (the clipboard is not available here)");
    }
  });
  window.addEventListener("hashchange", () => {
    if (location.hash !== shareHash() && fromHash()) {
      which();
      run();
    }
  });

  try {
    const go = new Go();
    const resp = fetch("playground.wasm");
    let result;
    try {
      result = await WebAssembly.instantiateStreaming(resp, go.importObject);
    } catch (e) { // a server that does not say application/wasm
      const bytes = await (await fetch("playground.wasm")).arrayBuffer();
      result = await WebAssembly.instantiate(bytes, go.importObject);
    }
    go.run(result.instance).then(() => {
      ready = false;
      setStatus("the engine stopped; reload the page", true);
    });
    for (let i = 0; !globalThis.policyrunReady; i++) {
      if (i > 200) throw new Error("the engine did not start");
      await new Promise((r) => setTimeout(r, 10));
    }
  } catch (e) {
    setStatus("could not load the engine: " + e.message, true);
    document.body.dataset.state = "failed";
    return;
  }
  ready = true;
  $("run").disabled = false;
  run();
}

start();
