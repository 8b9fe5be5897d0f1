#!/usr/bin/env bash
# Benchmark: karplint's full lint vs a bare serde-saphyr parse of the same files (every
# document into IgnoredAny, karplint's options) vs a plain read, at 1 and 2 threads, in one
# run. Prints a Markdown table: wall time, MB/s, objects/s, CPU seconds, peak RSS.
#
#   scripts/bench.sh [--files N] [--seed S] [--runs R] [--dir DIR]
#   scripts/bench.sh --pool-heavy N --corpus CORPUS [--runs R]
#   scripts/bench.sh --overlays N [--runs R]
#   scripts/bench.sh --workloads N --pools M [--runs R]
#
# Defaults: a generated tree of 2,000 files (quick); the published run uses --files 14000
# (about 146 MB). --dir DIR benchmarks an existing tree as it is, e.g. a corpus of real
# manifests. --pool-heavy N --corpus CORPUS benchmarks N copies of CORPUS, a corpus of real
# manifests passed as an argument (real charts and examples with many NodePools, all one
# cluster), the tree that shows the cost of scheduling every workload against every pool;
# the generated tree has too few distinct pools for that. --overlays N generates a
# kustomize tree of N overlays over one base and times it with kustomize off, rendered with
# no cache (cold), from a warm cache, and as a pre-commit run naming one overlay's patch
# (cold cache), with the number of roots each rendered. --workloads N --pools M generates a
# tree of N Deployments (one file each) and M NodePools with limits, taints and
# requirements (seeded by --seed): many workloads against a few pools.
# karplint is timed with --kustomize off, as the bare parse reads the files as written; on
# the pool-heavy tree it is also timed rendering its kustomizations from a warm cache.
# Needs hyperfine (apt-get install -y hyperfine) and GNU time (apt-get install -y time).
# When kubeconform and kube-score are installed, the tree is also timed with them.
set -euo pipefail
cd "$(dirname "$0")/.."

files=2000 seed=1 runs=3 dir="" pool_heavy="" corpus="" overlays="" workloads="" pools=""
while [ $# -gt 0 ]; do
  case "$1" in
    --files) files=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --pool-heavy) pool_heavy=$2; shift 2 ;;
    --corpus) corpus=$2; shift 2 ;;
    --overlays) overlays=$2; shift 2 ;;
    --workloads) workloads=$2; shift 2 ;;
    --pools) pools=$2; shift 2 ;;
    *) echo "usage: $0 [--files N] [--seed S] [--runs R] [--dir DIR] [--pool-heavy N --corpus CORPUS] [--overlays N] [--workloads N --pools M]" >&2; exit 2 ;;
  esac
done
if [ -n "$pool_heavy" ] && [ ! -d "$corpus" ]; then
  echo "bench.sh: --pool-heavy N needs --corpus CORPUS, a directory of real manifests to copy N times" >&2
  exit 2
fi
if [ -z "$pool_heavy" ] && [ -n "$corpus" ]; then
  echo "bench.sh: --corpus is for --pool-heavy N; use --dir DIR to benchmark one tree as it is" >&2
  exit 2
fi
if [ -n "$workloads$pools" ] && { [ -z "$workloads" ] || [ -z "$pools" ]; }; then
  echo "bench.sh: --workloads N and --pools M go together" >&2
  exit 2
fi
command -v hyperfine >/dev/null || { echo "bench.sh: needs hyperfine (apt-get install -y hyperfine)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench.sh: needs GNU time (apt-get install -y time)" >&2; exit 2; }

# The EC2NodeClass of the generated overlay and workload trees.
nodeclass='apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: bench}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: bench}}]
'
cargo build --release --quiet --bin karplint --example gen_corpus --example bare_parse
bin=target/release
if [ -n "$overlays" ]; then
  tree=target/bench-overlays-$overlays
  if [ ! -d "$tree" ]; then
    mkdir -p "$tree.tmp/base" "$tree.tmp/platform"
    printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n' >"$tree.tmp/base/kustomization.yaml"
    for d in $(seq 1 10); do
      cat >"$tree.tmp/base/app-$d.yaml" <<YAML
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-$d
spec:
  replicas: 2
  selector: {matchLabels: {app: app-$d}}
  template:
    metadata: {labels: {app: app-$d}}
    spec:
      containers:
        - name: app
          image: registry.example.com/app-$d:1.0
          resources: {requests: {cpu: 250m, memory: 256Mi}, limits: {memory: 256Mi}}
YAML
      echo "  - app-$d.yaml" >>"$tree.tmp/base/kustomization.yaml"
    done
    cat >"$tree.tmp/platform/nodepool.yaml" <<'YAML'
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
YAML
    printf '%s' "$nodeclass" >>"$tree.tmp/platform/nodepool.yaml"
    for i in $(seq 1 "$overlays"); do
      o="$tree.tmp/overlays/env-$i"
      mkdir -p "$o"
      printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: env-%s\nnamePrefix: env-%s-\nresources:\n  - ../../base\npatches:\n  - path: replicas.yaml\n' "$i" "$i" >"$o/kustomization.yaml"
      printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-1\nspec:\n  replicas: %s\n' "$(( i % 5 + 1 ))" >"$o/replicas.yaml"
    done
    mv "$tree.tmp" "$tree"
  fi
  cache=$(mktemp -d)
  lint="$bin/karplint -j 2 --format json --fail-on never"
  KARPLINT_CACHE_DIR=$cache $lint "$tree" >/dev/null
  named="--context $tree $tree/overlays/env-1/replicas.yaml"
  roots() { KARPLINT_TIMINGS=1 $lint "$@" 2>&1 >/dev/null | sed -n 's/.*timings: kustomize: \([^:]*\):.*/\1/p'; }
  echo "overlay tree: $tree ($overlays overlays of one base of 10 Deployments)"
  echo "kustomize off: no roots rendered"
  echo "cold (--no-cache): $(roots --no-cache "$tree")"
  echo "warm: $(KARPLINT_CACHE_DIR=$cache roots "$tree")"
  echo "pre-commit, one named patch, cold: $(roots --no-cache $named)"
  hyperfine --style basic --warmup 1 --runs "$runs" \
    -n "kustomize off" "$lint --kustomize off $tree" \
    -n "cold (--no-cache)" "$lint --no-cache $tree" \
    -n "warm cache" "KARPLINT_CACHE_DIR=$cache $lint $tree" \
    -n "pre-commit, one file, cold" "$lint --no-cache $named"
  rm -rf "$cache"
  exit 0
fi
if [ -n "$pool_heavy" ]; then
  dir=${dir:-target/bench-pool-heavy-$pool_heavy-$(basename "$(cd "$corpus" && pwd)")}
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir.tmp"
    for i in $(seq 1 "$pool_heavy"); do cp -r "$corpus" "$dir.tmp/copy-$i"; done
    mv "$dir.tmp" "$dir"
  fi
elif [ -n "$workloads" ]; then
  dir=${dir:-target/bench-workloads-$workloads-$pools-$seed}
  if [ ! -d "$dir" ]; then
    python3 - "$dir.tmp" "$workloads" "$pools" "$seed" <<'PY'
import os, random, sys
out, workloads, pools, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
families = ["c6i", "m6i", "r6i", "c7g", "m7g", "r7g", "m5", "c5", "g5", "p4d"]
zones = ["us-east-1a", "us-east-1b", "us-east-1c"]
os.makedirs(f"{out}/pools")
os.makedirs(f"{out}/apps")
for p in range(pools):
    fams = rng.sample(families, rng.randint(1, 4))
    tainted = p % 7 == 6
    lines = [
        "apiVersion: karpenter.sh/v1", "kind: NodePool", f"metadata: {{name: pool-{p}}}", "spec:",
        "  template:", "    metadata:", f"      labels: {{team: team-{p % 10}}}", "    spec:",
        "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}",
        "      requirements:",
        f"        - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [{', '.join(fams)}]}}",
        f"        - {{key: topology.kubernetes.io/zone, operator: In, values: [{', '.join(rng.sample(zones, rng.randint(1, 3)))}]}}",
        f"        - {{key: karpenter.sh/capacity-type, operator: In, values: [{rng.choice(['on-demand', 'spot'])}]}}",
    ]
    if tainted:
        lines += ["      taints:", f"        - {{key: dedicated, value: team-{p % 10}, effect: NoSchedule}}"]
    lines += ["  limits:", f"    cpu: {rng.choice([2000, 10000, 20000])}"]
    open(f"{out}/pools/pool-{p}.yaml", "w").write("\n".join(lines) + "\n")
for w in range(workloads):
    team = rng.randrange(10)
    lines = [
        "apiVersion: apps/v1", "kind: Deployment", "metadata:", f"  name: app-{w}", f"  namespace: team-{team}",
        "  labels:", f"    app: app-{w}", "spec:", f"  replicas: {rng.randint(1, 5)}",
        "  selector:", "    matchLabels:", f"      app: app-{w}", "  template:", "    metadata:",
        "      labels:", f"        app: app-{w}", "    spec:",
    ]
    if rng.random() < 0.5:
        lines += ["      nodeSelector:", f"        team: team-{team}"]
    if rng.random() < 0.3:
        lines += ["      tolerations:", f"        - {{key: dedicated, operator: Equal, value: team-{team}, effect: NoSchedule}}"]
    lines += [
        "      containers:", "        - name: app", f"          image: registry.example.com/app-{w}:1.0",
        "          ports:", "            - containerPort: 8080", "          resources:", "            requests:",
        f"              cpu: {rng.choice(['100m', '250m', '500m', '1', '2'])}",
        f"              memory: {rng.choice(['128Mi', '256Mi', '512Mi', '1Gi', '4Gi'])}",
    ]
    open(f"{out}/apps/app-{w}.yaml", "w").write("\n".join(lines) + "\n")
PY
    printf '%s' "$nodeclass" >"$dir.tmp/pools/nodeclass.yaml"
    mv "$dir.tmp" "$dir"
  fi
else
  dir=${dir:-target/bench-corpus-$files-$seed}
  if [ ! -d "$dir" ]; then
    "$bin/examples/gen_corpus" --files "$files" --seed "$seed" --out "$dir"
  fi
fi
nfiles=$(find "$dir" -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) | wc -l)
bytes=$(find "$dir" -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) -printf '%s\n' | awk '{s+=$1} END {print s}')
objects=$("$bin/karplint" --kustomize off --format json --fail-on never "$dir" | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["objects"])')
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# On the pool-heavy tree, karplint also renders its kustomizations, from a cache that
# hyperfine's warm-up run fills.
cache="$out/cache"
warm=()
if [ -n "$pool_heavy" ]; then
  warm=(kustomize)
fi
for j in 1 2; do
  lint="$bin/karplint -j $j --format json --fail-on never"
  extra=()
  if [ ${#warm[@]} -gt 0 ]; then
    extra=(-n "karplint, kustomize (warm cache)" "KARPLINT_CACHE_DIR=$cache $lint $dir")
  fi
  hyperfine --style none --warmup 1 --runs "$runs" --export-json "$out/j$j.json" \
    -n "plain read" "$bin/examples/bare_parse -j $j --read-only $dir" \
    -n "bare parse" "$bin/examples/bare_parse -j $j $dir" \
    -n "karplint" "$lint --kustomize off $dir" "${extra[@]}" >/dev/null
  for name in read bare lint "${warm[@]}"; do
    case $name in
      read) cmd="$bin/examples/bare_parse -j $j --read-only $dir" ;;
      bare) cmd="$bin/examples/bare_parse -j $j $dir" ;;
      lint) cmd="$lint --kustomize off $dir" ;;
      kustomize) cmd="env KARPLINT_CACHE_DIR=$cache $lint $dir" ;;
    esac
    /usr/bin/time -f '%M' -o "$out/rss-$name-j$j" $cmd >/dev/null
  done
done

python3 - "$out" "$bytes" "$objects" "$nfiles" <<'PY'
import json, sys
out, nbytes, objects, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
keys = {"plain read": "read", "bare parse": "bare", "karplint": "lint",
        "karplint, kustomize (warm cache)": "kustomize"}
print(f"Corpus: {files} files, {nbytes/1e6:.1f} MB, {objects} objects.\n")
print("| command | threads | wall (s, mean ± sd) | MB/s | objects/s | CPU (user+sys, s) | peak RSS (MB) |")
print("|---|---|---|---|---|---|---|")
means, cpus = {}, {}
for j in (1, 2):
    for r in json.load(open(f"{out}/j{j}.json"))["results"]:
        name, mean, sd = r["command"], r["mean"], r["stddev"] or 0.0
        cpu = r["user"] + r["system"]
        rss = int(open(f"{out}/rss-{keys[name]}-j{j}").read().split()[-1]) / 1024
        means[(name, j)], cpus[(name, j)] = mean, cpu
        print(f"| {name} | {j} | {mean:.2f} ± {sd:.2f} | {nbytes/1e6/mean:.1f} | {objects/mean:,.0f} | {cpu:.2f} | {rss:.1f} |")
print()
for j in (1, 2):
    print(f"- karplint / bare parse throughput at {j} thread(s): **{means[('bare parse', j)]/means[('karplint', j)]:.2f}×** (karplint takes {means[('karplint', j)]/means[('bare parse', j)]:.2f}× the bare parse's time, {cpus[('karplint', j)]/cpus[('bare parse', j)]:.2f}× its CPU time, which other work on the machine stretches less)")
    warm = means.get(("karplint, kustomize (warm cache)", j))
    if warm:
        print(f"- kustomize from a warm cache / `--kustomize off` at {j} thread(s): {warm/means[('karplint', j)]:.2f}×")
for name in ("bare parse", "karplint"):
    print(f"- {name} speed-up 1 → 2 threads: {means[(name, 1)]/means[(name, 2)]:.2f}×")
PY

# Peers, when installed (go install github.com/yannh/kubeconform/cmd/kubeconform@v0.6.7
# github.com/zegl/kube-score/cmd/kube-score@v1.19.0): the same tree at 2 threads.
# kubeconform runs offline against an empty schema directory, so it parses and skips every
# resource; kube-score scores every file (its exit code, 1 on critical findings, is ignored).
PATH=$PATH:$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin
peers=()
if command -v kubeconform >/dev/null; then
  mkdir -p "$out/schemas"
  peers+=(-n "kubeconform (no schemas)" "kubeconform -n 2 -summary -ignore-missing-schemas -schema-location '$out/schemas/{{ .ResourceKind }}.json' $dir")
fi
if command -v kube-score >/dev/null; then
  peers+=(-n "kube-score" "find $dir -type f \\( -name '*.yaml' -o -name '*.yml' \\) -print0 | xargs -0 kube-score score -o ci")
fi
if [ ${#peers[@]} -gt 0 ]; then
  hyperfine --style none --warmup 1 --runs "$runs" -i --export-json "$out/peers.json" \
    -n "karplint" "$bin/karplint -j 2 --format json --fail-on never --kustomize off $dir" "${peers[@]}" >/dev/null
  python3 - "$out/peers.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
lint = next(r["mean"] for r in results if r["command"] == "karplint")
print("\n| tool (2 threads) | wall (s, mean ± sd) | CPU (user+sys, s) | karplint's wall / the tool's |")
print("|---|---|---|---|")
for r in results:
    print(f"| {r['command']} | {r['mean']:.2f} ± {r['stddev'] or 0:.2f} | {r['user'] + r['system']:.2f} | {lint / r['mean']:.2f}× |")
PY
else
  echo
  echo "(kubeconform and kube-score not installed: no comparison with peers)"
fi
