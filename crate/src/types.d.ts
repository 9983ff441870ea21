// Generated from the Rust types by crate/src/typescript.rs; do not edit. After changing
// a type: OCR_BENCH_WRITE_TYPES=1 cargo test -p ocr-bench-core typescript

export type Memory = "lean" | "default";

export type Loader = "url" | "bytes";

export type Schedule = "staged" | "resident";

export type Scope = "full" | "decoder";

export type Weights = "embedded" | "external";

export type Poll = "none" | "kick";

export type Profile = "none" | "ops";

export type Choose = "cpu" | "gpu";

export type Verify = "none" | "wasm";

export type Capture = "off" | "on" | "all";

export type Realm = "page" | "worker";

export type OrtVersion = "1.30.0" | "1.31.1";

export type Release = "all" | "sessions" | "device" | "realm";

/** One benchmark run's configuration: the query's parameters under their names. */
export type Config = {
    /** vision encoder, a tier of the manifest: 121 = int4 MatMulNBits weights, 242 = fp16 in the built-in one */
    tier: string;
    /** session options: lean = enableCpuMemArena and enableMemPattern off, default = ORT's */
    memory: Memory;
    /** url = onnxruntime-web fetches the model, bytes = the page fetches it and passes bytes */
    loader: Loader;
    /** staged = vision in a worker that ends before the decoder loads, resident = both live together */
    schedule: Schedule;
    /** decoder graph variant, a decoder of the manifest */
    decoder: string;
    /** full = vision and decoder on the evaluation set, decoder = synthetic embeddings, full 128-token path */
    scope: Scope;
    /** evaluation set: models/eval/<cases>/cases.json */
    cases: string;
    /** model manifest URL */
    manifest: string;
    /** embedded = weights inside the .onnx, external = ONNX external data file */
    weights: Weights;
    /** most tokens decoded per case */
    maxTokens: number;
    /** how the page waits for GPU work: none = plain awaits (Firefox completes them on a 100 ms timer), kick = an empty queue submit at most every kickMs while a wait is pending */
    poll: Poll;
    /** milliseconds between kicks with poll=kick (unused otherwise) */
    kickMs: number;
    /** cases run first and not timed into the summary */
    warmup: number;
    /** every case this many times */
    repeat: number;
    /** ops = per-operator GPU time and the nodes placed off the WebGPU device */
    profile: Profile;
    /** token choice: cpu = the core's TokenChooser on logits read back every step, gpu = the same choice as a WGSL shader on the logits' GPU buffer (browser/decoding/decode-gpu.js) */
    choose?: Choose;
    /** with choose=gpu: decode steps queued before one readback of their chosen ids */
    sync?: number;
    /** wasm = after the timed cases, decode each case again on onnxruntime-web's WASM (CPU) execution provider and compare tokens and logits step by step (not with nbits-int8, nbits-int4, fixed-kv-fused: that build has no CPU GatherBlockQuantized) */
    verify: Verify;
    /** on = the decode steps replay one recorded onnxruntime-web graph (enableGraphCapture) instead of encoding each again; all = the prefill and the vision encoder too, each its own recorded graph; both need choose=gpu and a static-shape decoder (fixed-kv-gpu, fixed-kv-fused) */
    capture?: Capture;
    /** where the decoder session, its decode loop and the token choice run: page = in the page, worker = in a dedicated worker of their own (worker/decoder-worker.js) */
    realm?: Realm;
    /** decoder realms reading the cases at once from one queue: with realm=worker K dedicated workers, each with its own onnxruntime-web and session; with realm=page K sessions in the page's one onnxruntime-web (the isolation check) */
    pool?: number;
    /** the onnxruntime-web version every realm loads: 1.30.0 = the pinned one, 1.31.1 = the current release (npm's latest); each imported from its own node_modules folder */
    ort?: OrtVersion;
    /** what the release phase lets go of, step by step, with a memory sample after each: sessions = the onnxruntime sessions only, device = then the WebGPU devices too, realm = then the decoder's workers too (needs realm=worker), all = everything at once; every mode ends by letting go of the rest */
    release?: Release;
};

/** A description of one parameter, for the runner's `--help` and the page's error text. */
export type ParameterDescription = {
    name: string;
    kind: ParameterKind;
    /** The allowed values of a choice parameter (empty for the others). */
    values: Array<string>;
    /** The bounds of a number parameter (`None` for the others). */
    min: number | null;
    max: number | null;
    /** The default, as written in a query string. */
    default: string;
    /** The allowed values in words, as error messages give them. */
    allowed: string;
    description: string;
};

/** How a parameter's values are written. */
export type ParameterKind = "choice" | "integer" | "decimal" | "name" | "url";

export type Manifest = {
    name?: string | null;
    weightsSource?: string | null;
    buildInfo?: string | null;
    /** Which decoding loop runs the model; absent for the built-in prefix decoder. */
    family?: ManifestFamily;
    /**
     * The vocabulary file, relative to the manifest: the prefix family's characters (an
     * encoder-decoder's tokenizer is named in `encoderDecoder` instead).
     */
    vocab?: string | null;
    tokens: ManifestTokens;
    capability: ManifestCapability;
    /**
     * The decoder's logits output: `[1, capability.vocabulary]` for the prefix family,
     * `[1, 1, capability.vocabulary]` (one step's) for an encoder-decoder.
     */
    logitsShape: Array<number>;
    /** The vision tiers (an encoder-decoder's encoders) by their `tier=` name. */
    vision: { [key in string]: ManifestVision };
    /** The decoder variants by their `decoder=` name. */
    decoder: { [key in string]: ManifestDecoder };
    /** What an encoder-decoder adds: its tokenizer, preprocessor, cross-attention and token rule. */
    encoderDecoder?: ManifestEncoderDecoder | null;
};

/** The decoding loop a model needs. */
export type ManifestFamily = "prefix" | "encoder-decoder";

/** The parts of an encoder-decoder model beside its graphs (paths relative to the manifest). */
export type ManifestEncoderDecoder = {
    /** The Hugging Face `tokenizer.json` that decodes ids to text. */
    tokenizer: string;
    /** The `preprocessor_config.json` the core's `VitImageProcessor` reads. */
    preprocessor: string;
    /** The encoder's hidden size (`last_hidden_state` dim 2). */
    encoderHidden: number;
    /** Heads of the cross-attention cache `[1, heads, visionTokens, headDim]`. */
    crossAttentionHeads: number;
    generation: ManifestGeneration;
};

/**
 * The token rule of `generation_config.json` that the page implements, recorded with each
 * result: greedy, with the repetition penalty and n-gram ban where set.
 */
export type ManifestGeneration = {
    decoderStartTokenId: number;
    /** Any of them ends the sequence. */
    eosTokenIds: Array<number>;
    padTokenId?: number | null;
    /** Tokens of a sequence, the decoder start included. */
    maxLength: number;
    /** 1.0: no penalty. */
    repetitionPenalty: number;
    /** 0: no ban. */
    noRepeatNgramSize: number;
};

export type ManifestTokens = {
    bos: number;
    eos: number;
    /** The ids below it are special; vocabulary character `i` is id `i + vocabOffset`. */
    vocabOffset: number;
};

/** The model's shape: what every file of the manifest must agree with. */
export type ManifestCapability = {
    headDim: number;
    imageSize: number;
    visionTokens: number;
    kvSlots: number;
    layers: number;
    hiddenSize: number;
    intermediateSize: number;
    attentionHeads: number;
    kvHeads: number;
    vocabulary: number;
    maxTokens: number;
};

/**
 * The numbers of the model's shape that a run's record carries (its `capability`), defined
 * here once for the manifest and the record.
 */
export type ModelShape = {
    layers: number;
    hiddenSize: number;
    intermediateSize: number;
    attentionHeads: number;
    kvHeads: number;
    vocabulary: number;
    maxTokens: number;
};

export type ManifestVision = {
    description?: string | null;
    /** WebGPU features the adapter must offer (`shader-f16`). */
    requires: Array<string>;
    /** The model with its weights inside. */
    embedded: string;
    /** The model and its ONNX external-data file, where the variant has that form. */
    external?: ManifestExternalFiles | null;
    bytes: ManifestFileBytes;
    largestActivation: ManifestActivation;
    /** The largest stored tensor (onnxruntime uploads each as one GPU buffer). */
    largestInitializer?: ManifestInitializer | null;
    /**
     * The adapter limits the graph needs, checked by the page before it creates the session
     * (`docs/model-contract.md`, "Device limits").
     */
    limits?: ManifestLimits | null;
    /**
     * The variant of the same role the page takes instead when the adapter falls short of
     * `limits`; without one it refuses.
     */
    fallback?: string | null;
    /** The graph's input names, in the graph's order. */
    inputs: Array<string>;
    /** The graph's output names, in the graph's order. */
    outputs: Array<string>;
    /**
     * The operator types its nodes use, sorted: `Type` in the default ONNX domain,
     * `domain.Type` in another (`com.microsoft.MatMulNBits`).
     */
    operators: Array<string>;
};

export type ManifestDecoder = {
    /**
     * KV inputs of `capability.kvSlots` slots and a `past_length` input, rather than a cache
     * that grows by one each step.
     */
    fixedKv: boolean;
    /**
     * Every decode step has the same input and output shapes and runs every node on WebGPU:
     * what onnxruntime-web's graph capture (`capture=on`) needs.
     */
    capturable: boolean;
    /**
     * Under graph capture each past and its present must be one buffer, which the step
     * writes in place (`com.microsoft.GroupQueryAttention`'s static KV cache): the captured
     * loop passes each past's buffer as its present's output and copies nothing back.
     */
    kvSharedInPlace: boolean;
    /**
     * An encoder-decoder's pair form: this entry's graph is the first step
     * (`decoder_model.onnx`) and `withPast` every later one (`decoder_with_past_model.onnx`).
     * Absent for the merged form, whose `use_cache_branch` input picks the step.
     */
    withPast?: ManifestGraph | null;
    description?: string | null;
    /** WebGPU features the adapter must offer (`shader-f16`). */
    requires: Array<string>;
    /** The model with its weights inside. */
    embedded: string;
    /** The model and its ONNX external-data file, where the variant has that form. */
    external?: ManifestExternalFiles | null;
    bytes: ManifestFileBytes;
    largestActivation: ManifestActivation;
    /** The largest stored tensor (onnxruntime uploads each as one GPU buffer). */
    largestInitializer?: ManifestInitializer | null;
    /**
     * The adapter limits the graph needs, checked by the page before it creates the session
     * (`docs/model-contract.md`, "Device limits").
     */
    limits?: ManifestLimits | null;
    /**
     * The variant of the same role the page takes instead when the adapter falls short of
     * `limits`; without one it refuses.
     */
    fallback?: string | null;
    /** The graph's input names, in the graph's order. */
    inputs: Array<string>;
    /** The graph's output names, in the graph's order. */
    outputs: Array<string>;
    /**
     * The operator types its nodes use, sorted: `Type` in the default ONNX domain,
     * `domain.Type` in another (`com.microsoft.MatMulNBits`).
     */
    operators: Array<string>;
};

/**
 * What every graph of the manifest has: its files (paths relative to the manifest), their
 * sizes, its largest activation, its I/O names and its operators.
 */
export type ManifestGraph = {
    description?: string | null;
    /** WebGPU features the adapter must offer (`shader-f16`). */
    requires: Array<string>;
    /** The model with its weights inside. */
    embedded: string;
    /** The model and its ONNX external-data file, where the variant has that form. */
    external?: ManifestExternalFiles | null;
    bytes: ManifestFileBytes;
    largestActivation: ManifestActivation;
    /** The largest stored tensor (onnxruntime uploads each as one GPU buffer). */
    largestInitializer?: ManifestInitializer | null;
    /**
     * The adapter limits the graph needs, checked by the page before it creates the session
     * (`docs/model-contract.md`, "Device limits").
     */
    limits?: ManifestLimits | null;
    /**
     * The variant of the same role the page takes instead when the adapter falls short of
     * `limits`; without one it refuses.
     */
    fallback?: string | null;
    /** The graph's input names, in the graph's order. */
    inputs: Array<string>;
    /** The graph's output names, in the graph's order. */
    outputs: Array<string>;
    /**
     * The operator types its nodes use, sorted: `Type` in the default ONNX domain,
     * `domain.Type` in another (`com.microsoft.MatMulNBits`).
     */
    operators: Array<string>;
};

export type ManifestExternalFiles = {
    model: string;
    data: string;
};

export type ManifestFileBytes = {
    embedded: number;
    externalModel: number;
    externalData: number;
};

/** The largest single intermediate tensor of the graph's steps. */
export type ManifestActivation = {
    bytes: number;
    tensor: string;
    shape: Array<number>;
    step?: string | null;
};

/** The largest initializer of a graph. */
export type ManifestInitializer = {
    bytes: number;
    tensor: string;
    shape: Array<number>;
};

/**
 * WebGPU adapter limits a graph needs, by their `GPUSupportedLimits` names: each at least
 * this much. `scripts/ocrmodel/manifest.py` derives them from the built graph and from
 * onnxruntime-web's kernels (`crate/src/runtime/ort-webgpu-kernels.json`).
 */
export type ManifestLimits = {
    maxStorageBuffersPerShaderStage?: number | null;
    maxBufferSize?: number | null;
    maxStorageBufferBindingSize?: number | null;
    maxComputeWorkgroupStorageSize?: number | null;
};

/** What a `preprocessor_config.json` of the family asks for, with the class defaults filled in. */
export type VitSettings = {
    /** The processor named by the file (`ViTImageProcessor`, `DeiTFeatureExtractor`, …). */
    processor: string;
    /** The size the image is resized to. */
    resizeWidth: number;
    resizeHeight: number;
    resample: PilFilter;
    /** DeiT's centre crop, `[width, height]`, where `do_center_crop` is on. */
    centerCrop: [number, number] | null;
    /** `rescale_factor` where `do_rescale` is on. */
    rescaleFactor: number | null;
    /** `image_mean` and `image_std` where `do_normalize` is on. */
    mean: [number, number, number] | null;
    std: [number, number, number] | null;
};

/**
 * The PIL resampling filters by their `Image.Resampling` numbers, as `resample` in a
 * `preprocessor_config.json` names them.
 */
export type PilFilter = "nearest" | "lanczos" | "bilinear" | "bicubic" | "box" | "hamming";

/** The model kinds of `tokenizer.json`'s `model.type`. */
export type TokenizerModel = "BPE" | "WordPiece" | "WordLevel" | "Unigram";

/** The special ids of a Hugging Face decoder, as its decoding loop uses them. */
export type SpecialIds = {
    /** The first `input_ids` token: `decoder_start_token_id`, else `bos_token_id`. */
    decoderStart: number;
    /** `eos_token_id`: any of them ends a reading (a list in some configs). */
    eos: Array<number>;
    pad: number | null;
    bos: number | null;
};

/** Options of [`TokenChooser`]; a missing field takes the seed's value. */
export type TokenChooserOptions = {
    /**
     * Divides a positive score, multiplies a negative one, for every id already in the
     * sequence (BOS included). `1` switches the penalty off.
     */
    penalty?: number;
    /** A content id that ends a run of at least this many equal decoded tokens is blocked. */
    maxRun?: number;
    /** The id that starts every sequence (and is penalised like any seen id). */
    bos?: number;
};

/** One finished case as the page reports it. */
export type CaseInput = {
    id: string;
    expected: string;
    actual: string;
    totalMs: number;
    tokens?: number;
    decodeMs?: number;
};

export type SummaryOptions = {
    /** Default true; false in the decoder-only scope: nCER, distance and exact become null. */
    accuracyApplicable?: boolean;
};

export type CaseSummary = {
    id: string;
    distance: number | null;
    characters: number;
    exact: boolean | null;
    /** The reading is the expected text followed by extra characters (`score::CaseScore`). */
    trailingExtras: boolean | null;
};

export type Summary = {
    cases: number;
    nCER: number | null;
    distance: number | null;
    characters: number;
    exact: number | null;
    /** Cases read as the expected text followed by extra characters. */
    trailingExtras: number | null;
    medianMs: number | null;
    peakCaseMs: number | null;
    meanMs: number | null;
    p90Ms: number | null;
    msPerToken: number | null;
    perCase: Array<CaseSummary>;
};

/** What the page measured for one case. */
export type CaseRun = {
    id: string;
    expected: string;
    /** The decoded text. */
    text: string;
    tokenIds: Array<number>;
    visionMs: number;
    prefillMs: number;
    decodeMs: number;
    totalMs: number;
    decodeSteps: number;
    visionCallMs?: number | null;
    /**
     * The compute dispatches of the vision encoder's `run()` for this case; null where none
     * ran (`scope=decoder`).
     */
    visionDispatches?: number | null;
    probe: CaseProbe;
    /** Null for a warm-up run. */
    repeat: number | null;
    /** False in the decoder-only scope: distance, characters and exact become null. */
    accuracyApplicable: boolean;
    /** `pool` above 1: which of the decoder realms (0-based) read the case. */
    decoderRealm?: number | null;
    /** The case's style, where its set's `cases.json` names one. */
    style?: string | null;
};

/** One case's decode steps: the prefill, then per step after it. */
export type CaseProbe = {
    prefillSubmitMs: number;
    prefillSyncMs: number;
    submitMs: Array<number>;
    syncMs: Array<number>;
    /** One more than the steps: the prefill's choice comes first. */
    chooseMs: Array<number>;
    /**
     * choose=gpu: the steps queued per readback (`sync`), whose one wait sits on the last
     * step of each batch; absent where every step is read back (and in older records).
     */
    stepsPerReadback?: number | null;
    /**
     * The compute dispatches onnxruntime-web encoded for the prefill's `run()` (absent in
     * records older than the count).
     */
    prefillDispatches?: number | null;
    /** The same for each step of `submitMs`, in order. */
    stepDispatches?: Array<number> | null;
};

/** What the page gathered for the summary, besides its cases. */
export type SummaryInput = {
    runId: string;
    config: Config;
    capability: Capability;
    manifest: ManifestUse;
    results: Array<CaseResult>;
    warmupResults: Array<CaseResult>;
    memorySamples: Array<MemorySample>;
    environment: Environment;
    sessionMs: { [key in string]: number };
    wallMs: number;
    timingNotes: Array<string>;
    completionFloors: CompletionFloors;
    profile?: unknown;
    /** The realms' GPU bytes and the leak check, as the page gathered them. */
    gpuMemory?: GpuMemorySummary | null;
    /** Every session the page's realm created (browser/sessions.js). */
    sessions?: Array<SessionRecord> | null;
    /** `verify=wasm`: the reference decode of every timed case, in the order of `results`. */
    verification?: VerificationInput | null;
    /** `pool` above 1: the decoder-run phase's wall time and each realm's last memory report. */
    pool?: PoolInput | null;
};

/** What `www/verify.js` measured: each timed case's reference tokens and logit differences. */
export type VerificationInput = {
    /** `wasm`. */
    method: string;
    wallMs: number;
    cases: Array<VerifyCaseInput>;
    /**
     * The WebGPU features the manifest says the run's vision tier requires (its `requires`;
     * empty in the decoder-only scope): `shader-f16` marks an fp16 graph.
     */
    visionRequires: Array<string>;
    /** The same for the run's decoder. */
    decoderRequires: Array<string>;
};

/** What the page measured of a pool of decoder realms (`pool` above 1). */
export type PoolInput = {
    /** From the first case taken from the queue to the last one read: the page's time. */
    wallMs: number;
    /**
     * Each realm's memory (GPU bytes of its device, WASM heaps) as it last reported it, by
     * realm index; with realm=page, one shared report.
     */
    realmMemory: unknown[];
};

export type VerifyCaseInput = {
    id: string;
    repeat: number | null;
    /** The timed run's tokens (its `tokenIds`). */
    tokenIds: Array<number>;
    referenceTokenIds: Array<number>;
    /**
     * Per step both decodes ran (0 = prefill): the largest |WebGPU logit − WASM logit|;
     * NaN where a logit was NaN.
     */
    stepMaxAbsDiff: Array<number>;
};

/** Each realm's completion-floor rounds, as measured (null where it did not run). */
export type CompletionFloors = {
    page: FloorRounds | null;
    worker: FloorRounds | null;
    /** The decoder worker's (`realm=worker`); absent from pages older than it. */
    decoderWorker?: FloorRounds | null;
};

/** The whole summary of one run, as posted to `/benchmark-result`. */
export type PageSummary = {
    runId: string;
    tier: string;
    memoryMode: string;
    loaderMode: string;
    scheduleMode: string;
    decoderMode: string;
    benchmarkScope: string;
    capability: Capability;
    cases: number;
    nCER: number | null;
    distance: number | null;
    /** Null where accuracy does not apply (the decoder-only scope), as `nCER` is. */
    characters: number | null;
    exact: number | null;
    /**
     * Cases read as the expected text followed by extra characters (absent in records older
     * than it; null where accuracy does not apply).
     */
    trailingExtras?: number | null;
    /** Accuracy per style where the set's cases name styles; absent otherwise. */
    perStyle?: { [key in string]: StyleSummary } | null;
    medianMs: number | null;
    peakCaseMs: number | null;
    memorySamples: Array<MemorySample>;
    results: Array<CaseResult>;
    config: Config;
    casesName: string;
    weights: string;
    maxTokens: number;
    accuracyApplicable: boolean;
    meanMs: number | null;
    p90Ms: number | null;
    msPerToken: number | null;
    environment: Environment;
    timingNotes: Array<string>;
    /** `InferenceSession.create` per session (`vision`, `decoder`). */
    sessionMs: { [key in string]: number };
    wallMs: number;
    manifest: ManifestUse;
    poll: PollSetting;
    completion: Completion;
    completionBound: boolean;
    decodeProbe: RunProbe;
    repeats: Repeats;
    warmupResults: Array<CaseResult>;
    pipelineCompilation: PipelineCompilation | null;
    /** ORT's per-operator profile under `profile=ops`, else null. */
    profile: unknown;
    /** GPU bytes per realm from the wrapped devices (absent in records older than them). */
    gpuMemory?: GpuMemorySummary | null;
    /** Every ORT session the page's realm created, in order (absent in records older than it). */
    sessions?: Array<SessionRecord> | null;
    /** `verify=wasm`: the WASM (CPU) reference decode against the timed one; absent otherwise. */
    verification?: Verification | null;
    /** `pool` above 1: the whole set read by K decoder realms at once; absent otherwise. */
    pool?: PoolRun | null;
};

/** One finished case: the seed's fields, then the additions and the decode probe's. */
export type CaseResult = {
    id: string;
    expected: string;
    actual: string;
    distance: number | null;
    characters: number | null;
    exact: boolean | null;
    /**
     * The reading is the expected text followed by extra characters (absent in records older
     * than it).
     */
    trailingExtras?: boolean | null;
    text: string;
    tokens: number;
    visionMs: number;
    prefillMs: number;
    decodeMs: number;
    totalMs: number;
    tokenIds: Array<number>;
    decodeSteps: number;
    /** Resident schedule only: when `vision.run()` returned, before the GPU finished. */
    visionCallMs?: number | null;
    timeToFirstTokenMs: number;
    tokenLatency: LatencyStats | null;
    tokensPerSecond: number | null;
    decodeProbe: CaseProbe;
    /**
     * The compute dispatches of the case's vision, prefill and steps (absent in records older
     * than the count).
     */
    dispatches?: CaseDispatches | null;
    /** Which pass over the set (0-based); null for a warm-up run. */
    repeat: number | null;
    /** `pool` above 1: which of the decoder realms (0-based) read the case. */
    decoderRealm?: number | null;
    /** The case's style, where its set's `cases.json` names one. */
    style?: string | null;
};

/**
 * The model's shape from the manifest (its type, `crate::manifest::ModelShape`), and what
 * each session is.
 */
export type Capability = {
    vision: string;
    decoder: string;
    layers: number;
    hiddenSize: number;
    intermediateSize: number;
    attentionHeads: number;
    kvHeads: number;
    vocabulary: number;
    maxTokens: number;
};

/** The manifest the run used and the model entries it took. */
export type ManifestUse = {
    url: string;
    name: string | null;
    vision: unknown;
    decoder: unknown;
    /** The manifest's family, where it is not the built-in prefix decoder. */
    family?: ManifestFamily;
    /** An encoder-decoder's token rule (`encoderDecoder.generation`), as the run applied it. */
    generation?: ManifestGeneration | null;
};

/** One style's accuracy figures, with the summary's names. */
export type StyleSummary = {
    cases: number;
    nCER: number | null;
    distance: number;
    characters: number;
    exact: number;
    trailingExtras: number;
};

/** Who measured: the browser, its adapter(s) and ORT. */
export type Environment = {
    userAgent: string;
    adapter: unknown;
    ortVersion: string;
    crossOriginIsolated: boolean;
    hardwareConcurrency: number | null;
    /** The vision worker's adapter (staged schedule), once it ran. */
    workerAdapter?: unknown;
    /** The decoder worker's adapter (`realm=worker`). */
    decoderWorkerAdapter?: unknown;
    /**
     * Each variant the adapter's limits fell short of, and the manifest's fallback the page
     * took instead (`docs/model-contract.md`, "Device limits").
     */
    limitFallbacks?: Array<LimitFallback>;
};

/** The device-limit guard's choice: the variant asked for, the one used, and why. */
export type LimitFallback = {
    /** `vision` or `decoder`. */
    role: string;
    asked: string;
    used: string;
    /** The limit, the need and the adapter's value, in words. */
    reason: string;
};

/**
 * A set read by a pool of decoder realms (`pool` above 1): the page's time for the whole set
 * and what it cost.
 */
export type PoolRun = {
    realms: number;
    /** From the first case taken from the queue to the last one read. */
    wallMs: number;
    /** Decode steps (tokens after the prefill's) of every run, warm-up runs included. */
    decodeSteps: number;
    /** `decodeSteps` over `wallMs`: the pool's aggregate rate. */
    stepsPerSecond: number | null;
    /** Runs (warm-up included) each realm read, by realm index. */
    casesPerRealm: Array<number>;
    /** Each realm's last memory report (GPU bytes of its device, WASM heaps), by realm index. */
    realmMemory: unknown[];
};

/** One memory sample the page took between phases or cases. */
export type MemorySample = {
    label: string;
    atMs: number;
    jsHeapSizeLimit?: number | null;
    totalJSHeapSize?: number | null;
    usedJSHeapSize?: number | null;
    userAgentBytes?: number | null;
    userAgentMemoryError?: string | null;
    userAgentMs?: number | null;
    /** The page's GPU bytes (null until its device exists), from its wrapped device. */
    gpu?: GpuBytes | null;
    /** The page realm's WebAssembly heaps. */
    wasmHeaps?: Array<WasmHeap> | null;
    /** The vision worker's own report, as it last sent it (staged schedule). */
    worker?: RealmMemory | null;
    /** The decoder worker's own report, as it last sent it (`realm=worker`). */
    decoderWorker?: RealmMemory | null;
    /**
     * `realm=worker`: the decoder workers the page still held (not terminated) when it took
     * the sample; 0 after `release=realm`'s step (absent in records older than it).
     */
    decoderWorkers?: number | null;
    sampleMs: number;
};

/** The GPU bytes of one realm's device: what is live, the peak, by buffer usage. */
export type GpuBytes = {
    liveBytes: number;
    peakBytes: number;
    /** `storage`, `uniform`, `mapped`, `copy`, `other`, `texture`. */
    liveByKind: { [key in string]: number };
    created: number;
    destroyed: number;
    /** Dropped without `destroy()` and then garbage-collected. */
    collected: number;
    deviceDestroyed: boolean;
    measuredBy: string;
    /** The peak since the sample before (memory samples only). */
    windowPeakBytes?: number | null;
};

/** One WebAssembly heap of a realm (`onnxruntime`, `core`, or the module's file name). */
export type WasmHeap = {
    label: string;
    bytes: number;
    shared: boolean;
};

/** What a worker reports of its own realm. */
export type RealmMemory = {
    gpu: GpuBytes | null;
    wasmHeaps: Array<WasmHeap>;
    /** The worker's `performance.memory` (Chromium only). */
    totalJSHeapSize?: number | null;
    usedJSHeapSize?: number | null;
};

/** The run's GPU bytes per realm and the leak check over the cases. */
export type GpuMemorySummary = {
    measuredBy: string;
    page: GpuBytes | null;
    worker: GpuBytes | null;
    /** The decoder worker's device at its last report (`realm=worker`). */
    decoderWorker?: GpuBytes | null;
    leakCheck: LeakCheck;
};

export type LeakCheck = {
    afterCases: Array<LiveAfterCase>;
    grows: boolean;
    grownBytes: number;
    repeatGrownBytes: number;
    verdict: string;
};

export type LiveAfterCase = {
    label: string;
    liveBytes: number;
};

/** One ORT session, as the page created it (`browser/sessions.js`). */
export type SessionRecord = {
    /** `vision` or `decoder` for the timed run's sessions, `verify` for the WASM reference's. */
    role: string;
    /** The graph it runs: `vision` or `decoder`. */
    graph: string;
    /** `url` (onnxruntime-web fetched the files) or `bytes` (the page did). */
    loader: string;
    model: LoadedFile;
    /** The ONNX external data file, when the weights are external. */
    externalData: ExternalDataFile | null;
    /** In the order given to onnxruntime-web (`webgpu`, `wasm`). */
    executionProviders: Array<string>;
    options: SessionOptionsUsed;
    /** `InferenceSession.create`, including fetching the files. */
    createMs: number;
};

export type LoadedFile = {
    url: string;
    /** The file's size as served (null where the server gave none). */
    bytes: number | null;
};

export type ExternalDataFile = {
    /** The name the `.onnx` refers to it by. */
    path: string;
    url: string;
    bytes: number | null;
};

/**
 * The session options that change what runs or how it is measured, as passed to
 * `InferenceSession.create` (ORT's default written out where the page left one unset).
 */
export type SessionOptionsUsed = {
    /** `disabled`, `basic`, `extended` or `all` (ORT's default). */
    graphOptimizationLevel: string;
    /** Output name to `cpu` or `gpu-buffer`; an output not named stays on the CPU. */
    preferredOutputLocation: { [key in string]: string };
    freeDimensionOverrides: { [key in string]: number };
    enableProfiling: boolean;
    enableGraphCapture: boolean;
    /** Null: left to ORT. */
    enableCpuMemArena: boolean | null;
    enableMemPattern: boolean | null;
    logSeverityLevel: number;
};

export type PollSetting = {
    mode: string;
    kickMs: number | null;
};

/** The rounds as the page measured them (3 warm-up rounds, then 20 timed ones). */
export type FloorRounds = {
    rounds: number;
    warmupRounds: number;
    emptyQueueMs: Array<number>;
    dispatchReadbackMs: Array<number>;
    poll: string;
    kickMs: number | null;
    kicks: number;
    /**
     * How long the realm's probe took, warm-up rounds and pipeline included, in the page's
     * `probe` phase; absent from records made while the probe ran inside the load phases.
     */
    probeMs?: number | null;
    /**
     * Measured in this run or reused from the runner's probe cache, and under which key;
     * absent from records made before the cache (every floor then was measured).
     */
    source?: FloorSource;
};

/**
 * Where a floor of the record came from and the key it is kept under (null where no runner
 * keeps floors: under `serve`); a reused one also names the run that measured it.
 */
export type FloorSource = {
    origin: FloorOrigin;
    key: ProbeKey | null;
    measuredAt?: string;
    measuredRunId?: string;
};

/** Whether the run measured a floor or took it from the runner's cache. */
export type FloorOrigin = "measured" | "reused";

/**
 * Everything a realm's completion floor depends on. The runner names the browser build, the
 * target and the GPU driver; the page adds what it sees (its user agent, the adapter) and the
 * run's waiting (`poll`, `kickMs`) and the realm. Two floors with equal keys are the same
 * browser's timer on the same adapter and driver, met the same way.
 */
export type ProbeKey = {
    userAgent: string;
    adapter: ProbeAdapter;
    /** `wait`, `kick` or `spin`, as the floor's waiter was made. */
    poll: string;
    kickMs: number | null;
    /** `page`, `worker` (the vision worker) or `decoderWorker`. */
    realm: string;
    /** The browser build as the runner asked its executable (`Mozilla Firefox 140.5.0esr`). */
    browser: string;
    /** Where the browser runs (`local`, `webdriver:…`). */
    target: string;
    /**
     * The GPU's kernel driver on the browser's machine (`nvidia 580.159.04`); null where
     * there is none or the runner cannot see that machine.
     */
    driver: string | null;
};

/** The part of the key only the runner knows. */
export type RunnerProbeKey = {
    /** The browser build as the runner asked its executable (`Mozilla Firefox 140.5.0esr`). */
    browser: string;
    /** Where the browser runs (`local`, `webdriver:…`). */
    target: string;
    /**
     * The GPU's kernel driver on the browser's machine (`nvidia 580.159.04`); null where
     * there is none or the runner cannot see that machine.
     */
    driver: string | null;
};

/** The adapter as the page sees it (`GPUAdapterInfo`). */
export type ProbeAdapter = {
    vendor: string;
    architecture: string;
    device: string;
    description: string;
};

/** One floor the cache keeps: its key, its rounds as measured, and when and in which run. */
export type CachedFloor = {
    key: ProbeKey;
    rounds: FloorRounds;
    measuredAt: string;
    measuredRunId: string | null;
};

/**
 * What the runner answers the page that asks for the cache: whether it may reuse, the
 * runner's part of the key, and the floors kept (those of this browser, target and driver).
 */
export type ProbeOffer = {
    /** False under `--probe always`, under `serve`, or when the cache could not be read. */
    reuse: boolean;
    /** Why the page measures every floor, in words, where `reuse` is false. */
    reason: string | null;
    runner: RunnerProbeKey | null;
    floors: Array<CachedFloor>;
};

/** One realm's empty-queue and one-dispatch round trips, raw and as statistics. */
export type CompletionFloor = {
    emptyQueue: LatencyStats | null;
    dispatchReadback: LatencyStats | null;
    rounds: number;
    warmupRounds: number;
    emptyQueueMs: Array<number>;
    dispatchReadbackMs: Array<number>;
    poll: string;
    kickMs: number | null;
    kicks: number;
    /**
     * How long the realm's probe took, warm-up rounds and pipeline included, in the page's
     * `probe` phase; absent from records made while the probe ran inside the load phases.
     */
    probeMs?: number | null;
    /**
     * Measured in this run or reused from the runner's probe cache, and under which key;
     * absent from records made before the cache (every floor then was measured).
     */
    source?: FloorSource;
};

/** The completion floor of each realm and the verdict over the decode steps. */
export type Completion = {
    page: CompletionFloor | null;
    worker: CompletionFloor | null;
    /** The decoder worker's floor (`realm=worker`): the one the check then uses. */
    decoderWorker?: CompletionFloor | null;
    check: CompletionCheck;
};

/** Whether a run's GPU waits are the browser's completion timer, and the words for it. */
export type CompletionCheck = {
    floorMs: number;
    waits: number;
    atMultiples: number;
    bound: boolean;
    /** One sentence for the page, the summary and the runner's table. */
    verdict: string;
};

/** The distribution of one kind of latency, in milliseconds. */
export type LatencyStats = {
    count: number;
    minMs: number;
    p50Ms: number;
    p90Ms: number;
    maxMs: number;
    meanMs: number;
};

/** A mean across repeats with its two-sided 95 % confidence interval. */
export type MeanInterval = {
    n: number;
    mean: number;
    /** Null for a single repeat: one value has no spread. */
    ci95Low: number | null;
    ci95High: number | null;
    halfWidth: number | null;
};

/** The decode probe over every timed case of the run. */
export type RunProbe = {
    tokenLatency: LatencyStats | null;
    submit: LatencyStats | null;
    sync: LatencyStats | null;
    choose: LatencyStats | null;
    prefillSubmit: LatencyStats | null;
    prefillSync: LatencyStats | null;
    timeToFirstToken: LatencyStats | null;
    tokensPerSecond: number | null;
    gpuMsPerDecoderRun: number | null;
};

/** The timings of each pass over the set and their spread. */
export type Repeats = {
    count: number;
    perRepeat: Array<RepeatFigures>;
    interval: RepeatIntervals;
    /** False when a repeat decoded other tokens for a case (greedy decoding is deterministic). */
    tokensAgree: boolean;
};

export type RepeatFigures = {
    repeat: number | null;
    caseP50Ms: number | null;
    visionP50Ms: number | null;
    prefillP50Ms: number | null;
    timeToFirstTokenP50Ms: number | null;
    tokenP50Ms: number | null;
    tokenP90Ms: number | null;
    msPerToken: number | null;
    tokensPerSecond: number | null;
};

/** The mean and 95 % interval of each figure of [`RepeatFigures`] across the passes. */
export type RepeatIntervals = {
    caseP50Ms: MeanInterval | null;
    visionP50Ms: MeanInterval | null;
    prefillP50Ms: MeanInterval | null;
    timeToFirstTokenP50Ms: MeanInterval | null;
    tokenP50Ms: MeanInterval | null;
    tokenP90Ms: MeanInterval | null;
    msPerToken: MeanInterval | null;
    tokensPerSecond: MeanInterval | null;
};

/** The first run (warm-up or timed) against the steady state of the rest. */
export type PipelineCompilation = {
    first: FirstRun;
    steady: SteadyState | null;
    prefillExtraMs: number | null;
    visionExtraMs: number | null;
};

export type FirstRun = {
    id: string;
    warmup: boolean;
    totalMs: number;
    visionMs: number;
    prefillMs: number;
    firstTokenStepMs: number | null;
    /** Its dispatches (absent in records older than the count). */
    dispatches?: CaseDispatches | null;
};

export type SteadyState = {
    runs: number;
    caseP50Ms: number | null;
    visionP50Ms: number | null;
    prefillP50Ms: number | null;
    tokenP50Ms: number | null;
    /**
     * The steady runs' dispatches (absent in records older than the count, and where no
     * steady run has one).
     */
    dispatches?: DispatchMedians | null;
};

/** One case's dispatches: its vision encode, its prefill and its decode steps. */
export type CaseDispatches = {
    /** The vision encoder's `run()`; null where the case ran none (`scope=decoder`). */
    vision: number | null;
    prefill: number;
    /** The median (nearest rank) over the case's decode steps; null for a case without one. */
    stepP50: number | null;
};

/** Each figure of [`CaseDispatches`], its median (nearest rank) over the cases that have it. */
export type DispatchMedians = {
    visionP50: number | null;
    prefillP50: number | null;
    stepP50: number | null;
};

/** `verify=wasm`: every timed case against the same decode on the WASM (CPU) execution provider. */
export type Verification = {
    /** `wasm`. */
    method: string;
    tolerance: VerificationTolerance;
    /** Every case within the tolerance. */
    passed: boolean;
    /** Cases within the tolerance, of `total`. */
    agreeing: number;
    total: number;
    /** A case beyond the tolerance if there is one, else the largest logit difference. */
    worst: VerifiedCase | null;
    cases: Array<VerifiedCase>;
    /** The whole WASM pass: creating its sessions and decoding every case. */
    wallMs: number;
};

export type VerificationTolerance = {
    /** The most a logit may differ at a step compared. */
    maxAbsLogitDiff: number;
    /** `fp16` when an fp16 graph ran (`tier=242`, `decoder=fp16-matmul`), else `fp32`. */
    precision: string;
    /** `equal`: every chosen token, EOS included, must be the reference's. */
    tokens: string;
};

/**
 * One timed case against its reference decode. Step 0 is the prefill's logits, step k the
 * k-th decode step's; logits are compared at every step whose earlier tokens agree.
 */
export type VerifiedCase = {
    id: string;
    repeat: number | null;
    tokensAgree: boolean;
    /** The first step whose chosen token differs (or where one decode stopped), else null. */
    firstDivergingStep: number | null;
    /** Over the steps compared; null when a difference was not a finite number (NaN logits). */
    maxAbsLogitDiff: number | null;
    stepsCompared: number;
    /** The tokens the reference decoded (EOS not included, as in `tokenIds`). */
    referenceTokenIds: Array<number>;
    withinTolerance: boolean;
};
