#![allow(clippy::unwrap_used)]
//! The Kubernetes manifests (dist/kubernetes/): kustomize (kubectl's) renders them,
//! kubernetes-validate checks every object against the Kubernetes API's schemas
//! (strict: no field the API does not have), offline, for the oldest and the newest
//! Kubernetes the manifests support; then what the schemas cannot say: each profile's
//! DaemonSet runs as the unit and the image do (host network, NET_ADMIN and NET_RAW
//! only, /sys read-only but for the RoCE paths of dist/losslessd-roce.conf, the state
//! directory on the host, the configuration a ConfigMap that losslessd --check
//! accepts, on the nodes its label picks), and the PodMonitor (whose CRD schema is not
//! in kubernetes-validate) selects those pods on a port they have, with a token that
//! the render holds.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use yaml_rust2::{Yaml, YamlLoader};

/// The oldest and the newest Kubernetes the manifests are checked against (1.30: the
/// first with `recursiveReadOnly`).
const KUBERNETES: [&str; 2] = ["1.30.0", "1.37.0"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn render() -> String {
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(repo().join("dist/kubernetes"))
        .output()
        .unwrap();
    ok(out, "kubectl kustomize dist/kubernetes")
}

fn s(y: &Yaml) -> &str {
    y.as_str().unwrap_or_else(|| panic!("not a string: {y:?}"))
}

fn strings(y: &Yaml) -> Vec<String> {
    y.as_vec()
        .unwrap_or_else(|| panic!("not a list: {y:?}"))
        .iter()
        .map(|v| s(v).to_string())
        .collect()
}

fn kind<'a>(docs: &'a [Yaml], k: &str) -> Vec<&'a Yaml> {
    docs.iter()
        .filter(|d| d["kind"].as_str() == Some(k))
        .collect()
}

fn named<'a>(v: &'a Yaml, name: &str) -> &'a Yaml {
    v.as_vec()
        .unwrap()
        .iter()
        .find(|e| e["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("no {name} in {v:?}"))
}

/// The profiles: the directories of dist/kubernetes/profiles.
fn profiles() -> BTreeSet<String> {
    std::fs::read_dir(repo().join("dist/kubernetes/profiles"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// The image's command line (the Containerfile's ENTRYPOINT and CMD).
fn image_command() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("dist/container/Containerfile")).unwrap();
    let json = |key: &str| -> Vec<String> {
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} in the Containerfile"));
        serde_json::from_str(line.trim()).unwrap()
    };
    let mut line = json("ENTRYPOINT ");
    line.extend(json("CMD "));
    line
}

/// The /sys paths dist/losslessd-roce.conf makes writable.
fn roce_paths() -> BTreeSet<String> {
    let text = std::fs::read_to_string(repo().join("dist/losslessd-roce.conf")).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("ReadWritePaths="))
        .map(|p| p.trim_start_matches('-').to_string())
        .collect()
}

#[test]
fn the_manifests_render_and_pass_the_kubernetes_schemas_offline() {
    if !require(
        "the_manifests_render_and_pass_the_kubernetes_schemas_offline",
        &[Oracle::Netns, Oracle::Kubectl, Oracle::KubernetesValidate],
    ) {
        return;
    }
    let dir = TempDir::new();
    let file = dir.path().join("lossless.yaml");
    let text = render();
    std::fs::write(&file, &text).unwrap();
    let docs = YamlLoader::load_from_str(&text).unwrap();
    let objects: Vec<String> = docs
        .iter()
        .map(|d| {
            format!(
                "{}/{}",
                s(&d["kind"]).to_lowercase(),
                s(&d["metadata"]["name"])
            )
        })
        .collect();

    // In a network namespace of its own, with no network at all: nothing is fetched.
    let offline = Netns::bare();
    for version in KUBERNETES {
        let out = offline
            .command("kubernetes-validate")
            .args(["--strict", "--kubernetes-version", version])
            .arg(&file)
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "Kubernetes {version}:\n{said}");
        let major_minor = version.rsplit_once('.').unwrap().0;
        // Every object checked against a schema but the PodMonitor, which has none
        // there (a CRD of the Prometheus operator): checked below by what it refers to.
        for o in &objects {
            let passed = format!("passed for resource {o} against version {major_minor}");
            if o.starts_with("podmonitor/") {
                assert!(!said.contains(&passed), "{said}");
                assert!(
                    said.contains("Couldn't find schema for kind PodMonitor"),
                    "{said}"
                );
            } else {
                assert!(said.contains(&passed), "{o} not checked:\n{said}");
            }
        }
        assert_eq!(said.matches("Couldn't find schema").count(), 1, "{said}");
    }

    // The same validator refuses a field the API does not have (strict).
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        text.replacen(
            "hostNetwork: true",
            "hostNetwork: true\n      hostNetwrok: true",
            1,
        ),
    )
    .unwrap();
    let out = offline
        .command("kubernetes-validate")
        .args(["--strict", "--kubernetes-version", KUBERNETES[1]])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{out:?}");
}

#[test]
fn each_profile_runs_losslessd_as_the_unit_does_on_the_nodes_it_labels() {
    if !require(
        "each_profile_runs_losslessd_as_the_unit_does_on_the_nodes_it_labels",
        &[Oracle::Kubectl],
    ) {
        return;
    }
    let text = render();
    let docs = YamlLoader::load_from_str(&text).unwrap();
    let namespace = "lossless";
    for d in &docs {
        if s(&d["kind"]) != "Namespace" && !s(&d["kind"]).starts_with("Cluster") {
            assert_eq!(s(&d["metadata"]["namespace"]), namespace, "{d:?}");
        }
    }
    let daemonsets = kind(&docs, "DaemonSet");
    let mut seen = BTreeSet::new();
    let mut selectors = BTreeSet::new();
    let dir = TempDir::new();
    for ds in &daemonsets {
        let spec = &ds["spec"]["template"]["spec"];
        let labels = &ds["spec"]["template"]["metadata"]["labels"];
        let profile = s(&labels["lossless/profile"]).to_string();
        assert_eq!(s(&spec["nodeSelector"]["lossless/profile"]), profile);
        assert_eq!(
            s(&ds["spec"]["selector"]["matchLabels"]["lossless/profile"]),
            profile,
            "each DaemonSet selects only its own pods"
        );
        selectors.insert(format!("{:?}", ds["spec"]["selector"]));
        seen.insert(profile.clone());
        assert_eq!(spec["hostNetwork"].as_bool(), Some(true));

        let c = named(&spec["containers"], "losslessd");
        let sc = &c["securityContext"];
        assert_ne!(sc["privileged"].as_bool(), Some(true));
        assert_eq!(sc["allowPrivilegeEscalation"].as_bool(), Some(false));
        assert_eq!(strings(&sc["capabilities"]["drop"]), ["ALL"]);
        let mut caps = strings(&sc["capabilities"]["add"]);
        caps.sort();
        assert_eq!(caps, ["NET_ADMIN", "NET_RAW"], "the unit's bounding set");
        // The image's command line, and the metrics on loopback for the proxy.
        let mut line = vec![s(&c["image"]).to_string()];
        line.extend(strings(&c["args"]));
        let mut expected = image_command();
        expected[0] = line[0].clone();
        expected.extend(["--metrics".into(), "127.0.0.1:9717".into()]);
        assert_eq!(line, expected);
        assert!(s(&c["image"]).starts_with("localhost/lossless:"));
        for probe in ["livenessProbe", "readinessProbe"] {
            assert_eq!(
                strings(&c[probe]["exec"]["command"]),
                ["/usr/bin/lossless", "status"],
                "{probe}: the command tests/container.rs checks the exit codes of"
            );
        }
        let proxy = named(&spec["containers"], "kube-rbac-proxy");
        assert!(strings(&proxy["args"]).contains(&"--upstream=http://127.0.0.1:9717/".into()));

        // Mounts: by path, with the volume each is.
        let volumes = &spec["volumes"];
        let mut sys_rw = BTreeSet::new();
        for m in c["volumeMounts"].as_vec().unwrap() {
            let at = s(&m["mountPath"]);
            let ro = m["readOnly"].as_bool() == Some(true);
            let v = named(volumes, s(&m["name"]));
            match at {
                "/etc/lossless" => {
                    assert!(ro);
                    let cm = s(&v["configMap"]["name"]);
                    let map = kind(&docs, "ConfigMap")
                        .into_iter()
                        .find(|m| s(&m["metadata"]["name"]) == cm)
                        .unwrap_or_else(|| panic!("ConfigMap {cm} is not in the render"));
                    let file = dir.path().join(format!("{profile}.toml"));
                    std::fs::write(&file, s(&map["data"]["losslessd.toml"])).unwrap();
                    let check = Command::new(losslessd_bin())
                        .arg("--config")
                        .arg(&file)
                        .arg("--check")
                        .output()
                        .unwrap();
                    ok(
                        check,
                        &format!("losslessd --check of {profile}'s ConfigMap"),
                    );
                }
                "/var/lib/lossless" | "/run/lossless" => {
                    assert!(!ro);
                    assert_eq!(s(&v["hostPath"]["path"]), at, "on the host");
                }
                "/host/sys" => {
                    assert!(ro, "/sys is read-only");
                    assert_eq!(s(&v["hostPath"]["path"]), "/sys");
                    assert_eq!(s(&m["recursiveReadOnly"]), "IfPossible");
                }
                _ => {
                    let sys = at.strip_prefix("/host").unwrap_or_else(|| panic!("{at}?"));
                    assert!(!ro && sys.starts_with("/sys/"), "{at}");
                    assert_eq!(s(&v["hostPath"]["path"]), sys);
                    sys_rw.insert(sys.to_string());
                }
            }
        }
        // Writable: only where the RoCE settings are, and only when the profile
        // writes them.
        let writes_roce = text_of_config(&docs, spec).contains("roce.");
        if writes_roce {
            assert!(
                !sys_rw.is_empty(),
                "{profile}: RoCE settings, /sys read-only"
            );
        } else {
            assert!(
                sys_rw.is_empty(),
                "{profile}: {sys_rw:?} writable for nothing"
            );
        }
        assert!(sys_rw.is_subset(&roce_paths()), "{sys_rw:?}");
    }
    assert_eq!(seen, profiles(), "a DaemonSet per profile");
    assert_eq!(selectors.len(), daemonsets.len());

    // The PodMonitor scrapes every profile's pods on their proxy's port, with the
    // token of an account the render holds.
    let pm = kind(&docs, "PodMonitor");
    assert_eq!(pm.len(), 1);
    let sel = pm[0]["spec"]["selector"]["matchLabels"].as_hash().unwrap();
    let endpoint = &pm[0]["spec"]["podMetricsEndpoints"][0];
    for ds in &daemonsets {
        let labels = &ds["spec"]["template"]["metadata"]["labels"];
        for (k, v) in sel {
            assert_eq!(&labels[s(k)], v, "{k:?}");
        }
        let proxy = named(
            &ds["spec"]["template"]["spec"]["containers"],
            "kube-rbac-proxy",
        );
        named(&proxy["ports"], s(&endpoint["port"]));
    }
    let secret = s(&endpoint["authorization"]["credentials"]["name"]);
    let secrets = kind(&docs, "Secret");
    let token = secrets
        .iter()
        .find(|d| s(&d["metadata"]["name"]) == secret)
        .unwrap_or_else(|| panic!("Secret {secret} is not in the render"));
    assert_eq!(s(&token["type"]), "kubernetes.io/service-account-token");
    let account = s(&token["metadata"]["annotations"]["kubernetes.io/service-account.name"]);
    assert!(kind(&docs, "ServiceAccount")
        .iter()
        .any(|a| s(&a["metadata"]["name"]) == account));
}

/// The configuration a pod spec mounts at /etc/lossless.
fn text_of_config(docs: &[Yaml], spec: &Yaml) -> String {
    let c = named(&spec["containers"], "losslessd");
    let m = c["volumeMounts"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|m| s(&m["mountPath"]) == "/etc/lossless")
        .unwrap();
    let cm = s(&named(&spec["volumes"], s(&m["name"]))["configMap"]["name"]);
    let map = kind(docs, "ConfigMap")
        .into_iter()
        .find(|m| s(&m["metadata"]["name"]) == cm)
        .unwrap();
    s(&map["data"]["losslessd.toml"]).to_string()
}
