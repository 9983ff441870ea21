//! Facts of the runtime the page loads rather than of a model: what onnxruntime-web, at each
//! version the page can load (`ort=`, [`OrtVersion`]), can and cannot run. A model's manifest
//! says which operators each graph uses ([`crate::manifest`]); whether the runtime has a kernel
//! for them is decided here, so a new onnxruntime-web version changes this file and no
//! manifest. Kept per version beside it: what the WebGPU kernels need of the device (features,
//! raised limits) and how a session is given the page's device, in
//! `browser/ort-device-needs.js`, and how the profiler's lines read, in
//! `browser/ort-profile.js`. Which inputs the WebGPU kernels read on the CPU (what a variant's
//! `maxStorageBuffersPerShaderStage` is derived from) is in `runtime/ort-webgpu-kernels.json`,
//! a section per version: the manifest's builder declares the most any version needs, so the
//! page's device-limit guard checks one figure whatever `ort=` names. Tests here hold
//! `package.json`, the device needs and the kernels' file to these versions.

use crate::parameter::choice;

choice! {
    /// An onnxruntime-web version the page loads (`ort=`), each installed by `package.json`
    /// with its integrity pin: the pinned one under its own name, the others as npm aliases
    /// `onnxruntime-web-<version>`.
    OrtVersion { V1_30_0 = "1.30.0", V1_31_1 = "1.31.1" }
}

impl OrtVersion {
    /// The version every run loads unless `ort=` names another: `package.json`'s
    /// `onnxruntime-web`, which the Node tooling imports too.
    pub const PINNED: OrtVersion = OrtVersion::V1_30_0;

    /// The npm package folder this version is installed in, under `node_modules/`.
    pub fn package(self) -> String {
        if self == Self::PINNED {
            "onnxruntime-web".to_owned()
        } else {
            format!("onnxruntime-web-{self}")
        }
    }

    /// Whether the realm's WebGPU device is this version's own WebGPU context 0, which it
    /// destroys once the realm's last session is released. 1.31 attaches its provider through
    /// the EP-device API, which takes no device per session, so the page hands it the realm's
    /// device when context 0 asks for one (`browser/ort-device-needs.js`, "adopted"); 1.30 takes
    /// it per session and leaves it alone.
    pub fn ends_the_device_with_its_last_session(self) -> bool {
        self != OrtVersion::V1_30_0
    }

    /// The folder the realms import this version from and point `wasmPaths` at, relative to
    /// the served root: the runner serves it and the bundle carries it.
    pub fn dist_folder(self) -> String {
        format!("node_modules/{}/dist", self.package())
    }
}

impl OrtVersion {
    /// Operators (`domain.Type`, the ONNX domain left out for the default one) that the WASM
    /// (CPU) execution provider of this version's WebGPU build has no kernel for: a session
    /// with one is refused ("Could not find an implementation for GatherBlockQuantized(1)"), so
    /// `verify=wasm` cannot decode such a graph again on the CPU. Measured for each version by
    /// creating a WASM-provider session in Node (`ort.webgpu.mjs`): both refuse the
    /// `nbits-int8` decoder with that message and create the `einsum-int8` and `gather-opt`
    /// ones.
    pub fn wasm_missing_operators(self) -> &'static [&'static str] {
        match self {
            OrtVersion::V1_30_0 | OrtVersion::V1_31_1 => &["com.microsoft.GatherBlockQuantized"],
        }
    }
}

/// The first of `operators` the WASM execution provider of `version` cannot run, if any.
pub fn wasm_missing_operator(version: OrtVersion, operators: &[String]) -> Option<&str> {
    let missing = version.wasm_missing_operators();
    operators
        .iter()
        .map(String::as_str)
        .find(|operator| missing.contains(operator))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parameter::Choice;

    #[test]
    fn every_version_is_installed_by_package_json_with_its_integrity_pin() {
        let package: serde_json::Value =
            serde_json::from_str(include_str!("../../package.json")).unwrap();
        let lock: serde_json::Value =
            serde_json::from_str(include_str!("../../package-lock.json")).unwrap();
        for version in OrtVersion::ALL {
            // The pinned one under its own name (the Node tooling imports it), the others as
            // npm aliases.
            let wanted = if *version == OrtVersion::PINNED {
                version.to_string()
            } else {
                format!("npm:onnxruntime-web@{version}")
            };
            assert_eq!(
                package["dependencies"][version.package()],
                wanted.as_str(),
                "package.json does not install onnxruntime-web {version} as {}: add it, then \
                 read its facts here, in browser/ort-device-needs.js and browser/ort-profile.js",
                version.package()
            );
            let locked = &lock["packages"][format!("node_modules/{}", version.package())];
            assert_eq!(
                locked["version"],
                version.as_str(),
                "package-lock.json: {version}"
            );
            assert!(
                locked["integrity"]
                    .as_str()
                    .is_some_and(|pin| pin.starts_with("sha512-")),
                "package-lock.json has no integrity pin for onnxruntime-web {version}: run npm install"
            );
        }
    }

    #[test]
    fn each_version_is_imported_from_its_own_package_folder() {
        assert_eq!(
            OrtVersion::V1_30_0.dist_folder(),
            "node_modules/onnxruntime-web/dist"
        );
        assert_eq!(
            OrtVersion::V1_31_1.dist_folder(),
            "node_modules/onnxruntime-web-1.31.1/dist"
        );
    }

    #[test]
    fn the_device_needs_of_the_page_are_kept_for_every_version() {
        // browser/ort-device-needs.js: the features and limits its WebGPU kernels need and how
        // a session is given the device, one entry per version.
        let needs = include_str!("../../browser/ort-device-needs.js");
        let entries: Vec<&str> = needs
            .lines()
            .filter_map(|line| line.strip_prefix("\t\""))
            .filter_map(|line| line.split_once("\": {").map(|(version, _)| version))
            .collect();
        assert_eq!(
            entries,
            OrtVersion::VALUES,
            "browser/ort-device-needs.js keeps other versions than the page loads: read \
             GetRequiredLimits and the device hand-over of each version"
        );
    }

    #[test]
    fn the_kernel_bindings_the_manifest_is_derived_from_are_kept_for_every_version() {
        // scripts/ocrmodel/manifest.py reads it to write each variant's device limits.
        let kernels: serde_json::Value =
            serde_json::from_str(include_str!("runtime/ort-webgpu-kernels.json")).unwrap();
        let mut versions: Vec<&str> = kernels["versions"]
            .as_object()
            .expect("a \"versions\" object")
            .keys()
            .map(String::as_str)
            .collect();
        versions.sort_unstable();
        let mut loaded = OrtVersion::VALUES.to_vec();
        loaded.sort_unstable();
        assert_eq!(
            versions, loaded,
            "runtime/ort-webgpu-kernels.json keeps other versions than the page loads: read \
             each version's WebGPU kernels' CPU inputs, then rebuild the manifest"
        );
        for version in OrtVersion::ALL {
            let section = &kernels["versions"][version.as_str()];
            assert!(section["cpuInputs"].is_object(), "{version}: cpuInputs");
            assert!(
                section["workgroupStorageBytes"].is_u64(),
                "{version}: workgroupStorageBytes"
            );
        }
    }

    #[test]
    fn an_operator_without_a_wasm_kernel_is_named() {
        let ops = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        for version in OrtVersion::ALL {
            assert_eq!(
                wasm_missing_operator(*version, &ops(&["Gather", "MatMul"])),
                None
            );
            assert_eq!(
                wasm_missing_operator(
                    *version,
                    &ops(&["Gather", "com.microsoft.GatherBlockQuantized"])
                ),
                Some("com.microsoft.GatherBlockQuantized"),
                "{version}"
            );
        }
    }
}
