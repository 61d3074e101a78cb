#!/usr/bin/env python3
"""Lint of the Kubernetes manifests (deploy/kubernetes), rendered offline by kubectl kustomize.

For the base and every overlay it parses each rendered document and checks a schema
subset: apiVersion, kind and metadata.name present, known kinds only, one namespace; the
DaemonSet's container has an image, a command whose flags `eacgm serve` accepts
(src/cli/cmd_serve.cpp), the metrics port, probes on /healthz and /readyz, requests and
limits; $(VAR) references name variables the container defines (env values: earlier
entries); every volumeMount names a volume and every volume is mounted; every hostPath is
mounted read-only at its own path except /var/lib/eacgm; the ConfigMap's eacgm.toml parses,
uses keys docs/config.md documents, listens on the container's port and names the mounted
token file; the token Secret is mounted as one file with no group or other bits; the
Service and the ServiceMonitor select the pods and the Service's `metrics` port; every
Secret reference is one docs/kubernetes.md documents; no ConfigMap holds a password.

Then the privileges: it lists the DaemonSet's capabilities, host namespaces, security
settings and host mounts and asserts they are exactly the set in this file (PRIVILEGES,
HOST_MOUNTS), in docs/kubernetes.md's tables, and (the capabilities) in the systemd unit
deploy/eacgm.service: adding a capability anywhere fails until all three agree.

Usage: manifests_lint.py SOURCE_DIR   (KUBECTL=path picks the kubectl; default: on PATH)
"""
import os
import re
import shutil
import subprocess
import sys
import tomllib

try:
    import yaml
except ImportError:
    sys.exit("manifests_lint: python3-yaml is missing (apt-get install python3-yaml; scripts/setup.sh)")

# The privileges the DaemonSet gets: the only place besides docs/kubernetes.md and the
# systemd unit that says so.
CAPABILITIES = {"BPF", "PERFMON", "SYS_RESOURCE", "SYS_PTRACE", "DAC_READ_SEARCH"}
PRIVILEGES = {
    "hostPID": "true",
    "hostNetwork": "false",
    "hostIPC": "false",
    "privileged": "false",
    "allowPrivilegeEscalation": "false",
    "readOnlyRootFilesystem": "true",
    "runAsUser": "0",
    "seccompProfile": "RuntimeDefault",
    "appArmor": "unconfined",
    "capabilities.drop": "ALL",
}
HOST_MOUNTS = {
    "/sys/kernel/btf": "read-only",
    "/var/lib/kubelet/pod-resources": "read-only",
    "/var/log/pods": "read-only",
    "/var/log/containers": "read-only",
    "/var/lib/eacgm": "read-write",
}
WRITABLE_HOST_PATHS = {"/var/lib/eacgm"}
# Secret (name, key) pairs the manifests may reference; docs/kubernetes.md names each.
SECRETS = {("eacgm-token", "token"), ("eacgm-store", "url"), ("eacgm-store", "password")}

KINDS = {
    "Namespace": "v1",
    "ServiceAccount": "v1",
    "ConfigMap": "v1",
    "Service": "v1",
    "DaemonSet": "apps/v1",
    "ServiceMonitor": "monitoring.coreos.com/v1",
}
NAMESPACE = "eacgm"
CONTAINER = "eacgm"
PORT_NAME = "metrics"
PORT = 9977
APPARMOR_KEY = f"container.apparmor.security.beta.kubernetes.io/{CONTAINER}"
GPU_OVERLAYS = {"gpu-nodes", "postgres"}  # postgres builds on gpu-nodes


class Lint:
    def __init__(self):
        self.errors = []

    def error(self, where, what):
        self.errors.append(f"{where}: {what}")

    def check(self, ok, where, what):
        if not ok:
            self.error(where, what)
        return ok


def targets(source):
    root = os.path.join(source, "deploy", "kubernetes")
    out = [("base", os.path.join(root, "base"))]
    overlays = os.path.join(root, "overlays")
    for name in sorted(os.listdir(overlays)):
        if os.path.isfile(os.path.join(overlays, name, "kustomization.yaml")):
            out.append((name, os.path.join(overlays, name)))
    return out


def render(kubectl, path):
    env = dict(os.environ, KUBECONFIG=os.devnull)  # offline: no cluster is asked
    r = subprocess.run([kubectl, "kustomize", path], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"kubectl kustomize {path} failed: {r.stderr.strip()}")
    return [d for d in yaml.safe_load_all(r.stdout) if d is not None]


def serve_flags(source):
    """Every option `eacgm serve` declares, from src/cli/cmd_serve.cpp (and its helpers)."""
    with open(os.path.join(source, "src", "cli", "cmd_serve.cpp"), encoding="utf-8") as f:
        text = f.read()
    flags = set(re.findall(r'add_(?:option|flag|list_option)\([^"]*"(--[a-z][a-z0-9-]*)"', text))
    if "add_mode_option(" in text:
        flags.add("--mode")
    return flags


def config_keys(source):
    """section -> keys from docs/config.md's `## [section]` tables."""
    keys, section = {}, None
    with open(os.path.join(source, "docs", "config.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^## `\[(\w+)\]`", line)
            if m:
                section = m.group(1)
                keys.setdefault(section, set())
                continue
            if line.startswith("## "):
                section = None
            m = re.match(r"^\| `(\w+)`\s*\|", line)
            if section and m:
                keys[section].add(m.group(1))
    return keys


def section(text, heading):
    """The lines under a markdown heading, up to the next heading of any level."""
    m = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#|\Z)", text, re.M | re.S)
    return m.group(1) if m else ""


def documented(source):
    """The capabilities, settings, host mounts and Secrets docs/kubernetes.md lists."""
    with open(os.path.join(source, "docs", "kubernetes.md"), encoding="utf-8") as f:
        text = f.read()
    privileges, mounts, secrets = section(text, "Privileges"), section(text, "Mounts"), section(text, "Secrets")
    caps = set(re.findall(r"^\| `CAP_([A-Z_]+)` \|", privileges, re.M))
    settings = dict(re.findall(r"^\| `([A-Za-z.]+)` \| `([^`]*)` \|", privileges, re.M))
    host = dict(re.findall(r"^\| `(/[^`]*)` \| (read-only|read-write) \|", mounts, re.M))
    refs = set(re.findall(r"^\| `([a-z0-9-]+)` \| `([a-z0-9_-]+)` \|", secrets, re.M))
    return caps, settings, host, refs


def unit_capabilities(source):
    with open(os.path.join(source, "deploy", "eacgm.service"), encoding="utf-8") as f:
        text = f.read()
    sets = {}
    for key in ("CapabilityBoundingSet", "AmbientCapabilities"):
        m = re.search(rf"^{key}=(.*)$", text, re.M)
        sets[key] = {c.removeprefix("CAP_") for c in m.group(1).split()} if m else set()
    return sets


def secret_refs(obj, found):
    """(name, key) of every secretKeyRef and Secret volume item below obj."""
    if isinstance(obj, dict):
        ref = obj.get("secretKeyRef")
        if isinstance(ref, dict):
            found.add((ref.get("name"), ref.get("key")))
        for v in obj.values():
            secret_refs(v, found)
    elif isinstance(obj, list):
        for v in obj:
            secret_refs(v, found)


def var_refs(text):
    return re.findall(r"(?<!\$)\$\(([A-Za-z_][A-Za-z0-9_]*)\)", text)


def text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


class Target:
    def __init__(self, lint, source, name, docs):
        self.lint, self.source, self.name, self.docs = lint, source, name, docs
        self.by_kind = {}

    def err(self, what):
        self.lint.error(self.name, what)

    def ok(self, cond, what):
        return self.lint.check(cond, self.name, what)

    def run(self, docs_):
        for i, d in enumerate(docs_):
            self.document(i, d)
        counts = {kind: len(self.by_kind.get(kind, [])) for kind in KINDS}
        for kind, n in counts.items():
            self.ok(n == 1, f"expected one {kind}, found {n}")
        if any(n != 1 for n in counts.values()):
            return None
        ds = self.by_kind["DaemonSet"][0]
        pod = ds["spec"]["template"]
        container = self.container(pod)
        if container is None:
            return None
        self.daemonset(ds, pod, container)
        self.config(pod, container)
        self.service_and_monitor(pod, container)
        self.secrets(docs_)
        if self.name in GPU_OVERLAYS:
            self.gpu(pod["spec"], container)
        if self.name == "postgres":
            self.postgres(container)
        return self.privileges(pod, container)

    def document(self, i, d):
        where = f"document {i}"
        if not self.ok(isinstance(d, dict), f"{where} is not a mapping"):
            return
        kind, api = d.get("kind"), d.get("apiVersion")
        name = (d.get("metadata") or {}).get("name")
        self.ok(bool(api), f"{where}: no apiVersion")
        self.ok(bool(name), f"{where} ({kind}): no metadata.name")
        if not self.ok(kind in KINDS, f"{where}: unknown kind {kind!r} (known: {', '.join(sorted(KINDS))})"):
            return
        self.ok(api == KINDS[kind], f"{kind} {name}: apiVersion {api}, expected {KINDS[kind]}")
        if kind == "Namespace":
            self.ok(name == NAMESPACE, f"Namespace {name}, expected {NAMESPACE}")
        else:
            ns = d["metadata"].get("namespace")
            self.ok(ns == NAMESPACE, f"{kind} {name}: namespace {ns}, expected {NAMESPACE}")
        self.by_kind.setdefault(kind, []).append(d)

    def container(self, pod):
        containers = pod.get("spec", {}).get("containers") or []
        named = [c for c in containers if c.get("name") == CONTAINER]
        if not self.ok(len(named) == 1, f"the DaemonSet has no container named {CONTAINER}"):
            return None
        return named[0]

    def daemonset(self, ds, pod, c):
        spec = pod["spec"]
        labels = pod.get("metadata", {}).get("labels") or {}
        selector = ds["spec"].get("selector", {}).get("matchLabels") or {}
        self.ok(selector and all(labels.get(k) == v for k, v in selector.items()),
                f"DaemonSet selector {selector} does not match the pod's labels {labels}")
        self.ok(bool(c.get("image")), "the container has no image")
        ports = {p.get("name"): p for p in c.get("ports") or []}
        self.ok(ports.get(PORT_NAME, {}).get("containerPort") == PORT,
                f"the container has no port {PORT_NAME} = {PORT}")
        for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
            get = (c.get(probe) or {}).get("httpGet") or {}
            self.ok(get.get("path") == path and get.get("port") in (PORT_NAME, PORT),
                    f"{probe} is not an HTTP GET of {path} on port {PORT_NAME}")
        res = c.get("resources") or {}
        for part in ("requests", "limits"):
            for r in ("cpu", "memory"):
                self.ok(r in (res.get(part) or {}), f"resources.{part}.{r} missing")
        sa = spec.get("serviceAccountName")
        accounts = {d["metadata"]["name"] for d in self.by_kind.get("ServiceAccount", [])}
        self.ok(sa in accounts, f"serviceAccountName {sa} is none of the ServiceAccounts {sorted(accounts)}")
        self.ok(spec.get("priorityClassName") == "system-node-critical",
                "priorityClassName is not system-node-critical")
        # The command: the binary, `serve`, and flags `eacgm serve` has.
        cmd = (c.get("command") or []) + (c.get("args") or [])
        self.ok(len(cmd) >= 2 and cmd[0].endswith("/eacgm") and cmd[1] == "serve",
                f"the command is not eacgm serve: {cmd[:2]}")
        flags = serve_flags(self.source) | {"--config"}
        used = {a.split("=", 1)[0] for a in cmd[2:] if a.startswith("--")}
        for f in sorted(used - flags):
            self.err(f"flag {f} is not an option of eacgm serve (src/cli/cmd_serve.cpp)")
        for f in ("--config", "--node", "--store"):
            self.ok(f in used, f"the command has no {f}")
        # $(VAR): args may name any of the container's variables, env values earlier ones.
        env = c.get("env") or []
        names = [e.get("name") for e in env]
        self.ok(len(names) == len(set(names)), f"env names repeat: {names}")
        for a in cmd:
            for v in var_refs(a):
                self.ok(v in names, f"argument {a!r} names $({v}), which the container does not define")
        for i, e in enumerate(env):
            for v in var_refs(text(e.get("value", ""))):
                self.ok(v in names[:i], f"env {e.get('name')} names $({v}), not defined before it")
        for e in env:
            self.ok(("value" in e) != ("valueFrom" in e), f"env {e.get('name')} needs exactly one of value, valueFrom")
        node = [e for e in env if e.get("name") == "NODE_NAME"]
        self.ok(node and node[0].get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName",
                "NODE_NAME does not come from spec.nodeName")
        self.ok("$(NODE_NAME)" in cmd and cmd.index("$(NODE_NAME)") > 0 and cmd[cmd.index("$(NODE_NAME)") - 1] == "--node",
                "the command does not pass --node $(NODE_NAME)")
        # Volumes: every mount names a volume, every volume is mounted, hostPaths read-only.
        volumes = {v.get("name"): v for v in spec.get("volumes") or []}
        mounts = c.get("volumeMounts") or []
        for m in mounts:
            v = volumes.get(m.get("name"))
            if not self.ok(v is not None, f"volumeMount {m.get('mountPath')} names no volume ({m.get('name')})"):
                continue
            host = (v.get("hostPath") or {}).get("path")
            if host is None:
                continue
            self.ok(m.get("mountPath") == host, f"hostPath {host} is mounted at {m.get('mountPath')}, not at its own path")
            if host in WRITABLE_HOST_PATHS:
                self.ok(not m.get("readOnly"), f"hostPath {host} must be writable")
            else:
                self.ok(m.get("readOnly") is True, f"hostPath {host} is not mounted readOnly")
        mounted = {m.get("name") for m in mounts}
        for name in sorted(set(volumes) - mounted):
            self.err(f"volume {name} is not mounted")

    def mount_of(self, pod, c, pred):
        volumes = {v.get("name"): v for v in pod["spec"].get("volumes") or []}
        return [(m, volumes[m["name"]]) for m in c.get("volumeMounts") or [] if m.get("name") in volumes
                and pred(volumes[m["name"]])]

    def config(self, pod, c):
        cmd = (c.get("command") or []) + (c.get("args") or [])
        path = cmd[cmd.index("--config") + 1] if "--config" in cmd[:-1] else None
        cms = {d["metadata"]["name"]: d for d in self.by_kind["ConfigMap"]}
        found = [(m, v) for m, v in self.mount_of(pod, c, lambda v: "configMap" in v)
                 if path and os.path.dirname(path) == m["mountPath"].rstrip("/")]
        if not self.ok(len(found) == 1, f"--config {path} is in no mounted ConfigMap"):
            return
        m, v = found[0]
        cm = cms.get(v["configMap"].get("name"))
        if not self.ok(cm is not None, f"volume {v['name']} names ConfigMap {v['configMap'].get('name')}, which is not rendered"):
            return
        body = (cm.get("data") or {}).get(os.path.basename(path))
        if not self.ok(body is not None, f"ConfigMap {cm['metadata']['name']} has no key {os.path.basename(path)}"):
            return
        try:
            conf = tomllib.loads(body)
        except tomllib.TOMLDecodeError as e:
            self.err(f"{os.path.basename(path)} does not parse: {e}")
            return
        known = config_keys(self.source)
        for section, table in conf.items():
            if not self.ok(isinstance(table, dict) and section in known, f"eacgm.toml: [{section}] is no section of docs/config.md"):
                continue
            for key in table:
                self.ok(key in known[section], f"eacgm.toml: [{section}] {key} is not in docs/config.md")
        serve = conf.get("serve", {})
        listen = serve.get("listen", "")
        self.ok(listen == f"0.0.0.0:{PORT}", f"[serve] listen is {listen!r}, expected 0.0.0.0:{PORT} (the pod's port)")
        token = serve.get("token_file")
        tok = [(m, v) for m, v in self.mount_of(pod, c, lambda v: "secret" in v) if m["mountPath"] == token]
        if self.ok(len(tok) == 1, f"[serve] token_file {token} is no mounted Secret file"):
            m, v = tok[0]
            # The agent opens the file with O_NOFOLLOW and refuses group or other bits.
            self.ok(m.get("subPath") is not None, f"the token {token} is not mounted with subPath (a Secret volume's files are symlinks)")
            mode = v["secret"].get("defaultMode", 0o644)
            self.ok(mode & 0o077 == 0, f"the token's defaultMode {mode:#o} opens it to group or others")
            self.ok((v["secret"].get("secretName"), m.get("subPath")) in SECRETS,
                    f"the token comes from {v['secret'].get('secretName')}/{m.get('subPath')}, not a documented Secret")
        for cm_ in cms.values():
            for k, val in (cm_.get("data") or {}).items():
                self.ok(not re.search(r"password|postgres(ql)?://[^/\s\"]*:[^@\s\"]*@", text(val), re.I),
                        f"ConfigMap {cm_['metadata']['name']} key {k} holds a password")

    def service_and_monitor(self, pod, c):
        svc = self.by_kind["Service"][0]
        labels = pod.get("metadata", {}).get("labels") or {}
        sel = svc["spec"].get("selector") or {}
        self.ok(sel and all(labels.get(k) == v for k, v in sel.items()), f"the Service selects {sel}, not the agent's pods")
        ports = {p.get("name"): p for p in svc["spec"].get("ports") or []}
        port = ports.get(PORT_NAME)
        if self.ok(port is not None, f"the Service has no port named {PORT_NAME}"):
            self.ok(port.get("targetPort") in (PORT_NAME, PORT), f"the Service's {PORT_NAME} port targets {port.get('targetPort')}")
        sm = self.by_kind["ServiceMonitor"][0]
        msel = sm["spec"].get("selector", {}).get("matchLabels") or {}
        svc_labels = svc["metadata"].get("labels") or {}
        self.ok(msel and all(svc_labels.get(k) == v for k, v in msel.items()),
                f"the ServiceMonitor selects {msel}, not the Service's labels {svc_labels}")
        eps = sm["spec"].get("endpoints") or []
        self.ok(len(eps) == 1, f"the ServiceMonitor has {len(eps)} endpoints, expected 1")
        for ep in eps:
            self.ok(ep.get("port") in ports, f"the ServiceMonitor scrapes port {ep.get('port')}, which the Service does not name")
            self.ok(ep.get("path", "/metrics") == "/metrics", f"the ServiceMonitor scrapes {ep.get('path')}")
            auth = ep.get("authorization") or {}
            cred = auth.get("credentials") or {}
            self.ok(auth.get("type", "Bearer") == "Bearer" and (cred.get("name"), cred.get("key")) == ("eacgm-token", "token"),
                    "the ServiceMonitor does not send the bearer token of Secret eacgm-token, key token")

    def secrets(self, docs_):
        found = set()
        secret_refs(docs_, found)
        for d in self.by_kind.get("ServiceMonitor", []):
            for ep in d["spec"].get("endpoints") or []:
                cred = (ep.get("authorization") or {}).get("credentials") or ep.get("bearerTokenSecret")
                if cred:
                    found.add((cred.get("name"), cred.get("key")))
        for name, key in sorted(found - SECRETS):
            self.err(f"Secret reference {name}/{key} is not among the documented ones {sorted(SECRETS)}")
        for name, key in sorted(found - self.docs[3]):
            self.err(f"Secret reference {name}/{key} is not in docs/kubernetes.md's Secrets table")

    def gpu(self, spec, c):
        self.ok((spec.get("nodeSelector") or {}).get("nvidia.com/gpu.present") == "true",
                'no nodeSelector nvidia.com/gpu.present: "true"')
        self.ok(any(t.get("key") == "nvidia.com/gpu" and t.get("effect") == "NoSchedule" for t in spec.get("tolerations") or []),
                "no toleration of nvidia.com/gpu NoSchedule")
        env = {e.get("name"): e.get("value") for e in c.get("env") or []}
        self.ok(env.get("NVIDIA_VISIBLE_DEVICES") == "all", "NVIDIA_VISIBLE_DEVICES is not all (no NVML)")

    def postgres(self, c):
        env = {e.get("name"): e for e in c.get("env") or []}
        ref = (env.get("EACGM_STORE", {}).get("valueFrom") or {}).get("secretKeyRef") or {}
        self.ok((ref.get("name"), ref.get("key")) == ("eacgm-store", "url"),
                "EACGM_STORE does not come from Secret eacgm-store, key url")
        cmd = c.get("args") or []
        self.ok("--store" in cmd and cmd[cmd.index("--store") + 1:][:1] == ["$(EACGM_STORE)"],
                "--store is not $(EACGM_STORE)")

    def privileges(self, pod, c):
        """What the DaemonSet is granted, as the lists PRIVILEGES / HOST_MOUNTS spell it."""
        spec, sc = pod["spec"], c.get("securityContext") or {}
        caps = sc.get("capabilities") or {}
        got = {
            "hostPID": text(spec.get("hostPID", False)),
            "hostNetwork": text(spec.get("hostNetwork", False)),
            "hostIPC": text(spec.get("hostIPC", False)),
            "privileged": text(sc.get("privileged", False)),
            "allowPrivilegeEscalation": text(sc.get("allowPrivilegeEscalation", True)),
            "readOnlyRootFilesystem": text(sc.get("readOnlyRootFilesystem", False)),
            "runAsUser": text(sc.get("runAsUser", (spec.get("securityContext") or {}).get("runAsUser", "image"))),
            "seccompProfile": text((sc.get("seccompProfile") or {}).get("type", "unset")),
            "appArmor": text((pod.get("metadata", {}).get("annotations") or {}).get(APPARMOR_KEY, "runtime/default")),
            "capabilities.drop": ",".join(caps.get("drop") or []) or "none",
        }
        added = set(caps.get("add") or [])
        volumes = {v.get("name"): v for v in spec.get("volumes") or []}
        host = {}
        for m in c.get("volumeMounts") or []:
            p = (volumes.get(m.get("name"), {}).get("hostPath") or {}).get("path")
            if p:
                host[p] = "read-only" if m.get("readOnly") else "read-write"
        if spec.get("initContainers") or len(spec.get("containers") or []) != 1:
            self.err("the DaemonSet has other containers than eacgm: their privileges are not checked")
        return got, added, host


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    source = sys.argv[1]
    kubectl = os.environ.get("KUBECTL") or shutil.which("kubectl")
    if not kubectl:
        sys.exit("manifests_lint: kubectl is not on PATH (scripts/setup.sh installs Debian's kubernetes-client)")
    lint = Lint()
    docs = documented(source)
    doc_caps, doc_settings, doc_mounts, doc_secrets = docs
    granted = {}
    for name, path in targets(source):
        try:
            rendered = render(kubectl, path)
        except RuntimeError as e:
            lint.error(name, str(e))
            continue
        got = Target(lint, source, name, docs).run(rendered)
        if got:
            granted[name] = got
    # The privileges, listed, then compared with the documented set.
    for name, (settings, caps, host) in granted.items():
        print(f"{name}: capabilities {' '.join(sorted(caps))}; "
              + "; ".join(f"{k} {v}" for k, v in settings.items())
              + "; host mounts " + ", ".join(f"{p} ({a})" for p, a in sorted(host.items())))
        lint.check(caps == CAPABILITIES, name, f"capabilities {sorted(caps)}, documented {sorted(CAPABILITIES)}")
        lint.check(settings == PRIVILEGES, name,
                   "security settings differ from the documented ones: "
                   + ", ".join(f"{k} {settings.get(k)} (documented {PRIVILEGES.get(k)})"
                               for k in sorted(set(settings) | set(PRIVILEGES)) if settings.get(k) != PRIVILEGES.get(k)))
        lint.check(host == HOST_MOUNTS, name, f"host mounts {host}, documented {HOST_MOUNTS}")
    lint.check(doc_caps == CAPABILITIES, "docs/kubernetes.md",
               f"lists capabilities {sorted(doc_caps)}, the test {sorted(CAPABILITIES)}")
    lint.check(doc_settings == PRIVILEGES, "docs/kubernetes.md", f"lists settings {doc_settings}, the test {PRIVILEGES}")
    lint.check(doc_mounts == HOST_MOUNTS, "docs/kubernetes.md", f"lists host mounts {doc_mounts}, the test {HOST_MOUNTS}")
    lint.check(doc_secrets == SECRETS, "docs/kubernetes.md", f"lists Secrets {sorted(doc_secrets)}, the test {sorted(SECRETS)}")
    for key, caps in unit_capabilities(source).items():
        lint.check(caps == CAPABILITIES, "deploy/eacgm.service",
                   f"{key} is {sorted(caps)}, the DaemonSet's {sorted(CAPABILITIES)}")
    if lint.errors:
        for e in lint.errors:
            print(f"FAIL {e}")
        sys.exit(1)
    print(f"ok: {len(granted)} renders ({', '.join(granted)}) checked with {kubectl}")


if __name__ == "__main__":
    main()
