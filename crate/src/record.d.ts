// The result record's types (crate/src/record.rs, crate/src/build_summary.rs). A test
// (crate/src/record_typescript.rs) checks every interface's fields against the Rust types.

/** What the page measured for one case (the input of caseResult). */
export interface CaseRun {
    id: string;
    expected: string;
    /** The decoded text. */
    text: string;
    tokenIds: number[];
    visionMs: number;
    prefillMs: number;
    decodeMs: number;
    totalMs: number;
    decodeSteps: number;
    visionCallMs?: number | null;
    probe: CaseProbe;
    /** Null for a warm-up run. */
    repeat: number | null;
    /** False in the decoder-only scope: distance, characters and exact become null. */
    accuracyApplicable: boolean;
}

/** One case's decode steps: the prefill, then per step after it. */
export interface CaseProbe {
    prefillSubmitMs: number;
    prefillSyncMs: number;
    submitMs: number[];
    syncMs: number[];
    /** One more than the steps: the prefill's choice comes first. */
    chooseMs: number[];
    /** choose = "gpu": the steps queued per readback (sync); absent where every step is read back. */
    stepsPerReadback?: number;
}

/** One finished case: /benchmark-progress's `case`, an entry of `results`. */
export interface CaseResult {
    id: string;
    expected: string;
    actual: string;
    distance: number | null;
    characters: number | null;
    exact: boolean | null;
    text: string;
    tokens: number;
    visionMs: number;
    prefillMs: number;
    decodeMs: number;
    totalMs: number;
    tokenIds: number[];
    decodeSteps: number;
    /** Resident schedule only. */
    visionCallMs?: number;
    timeToFirstTokenMs: number;
    tokenLatency: LatencyStats | null;
    tokensPerSecond: number | null;
    decodeProbe: CaseProbe;
    repeat: number | null;
}

/** What the page gathered for the summary (the input of buildSummary). */
export interface SummaryInput {
    runId: string;
    config: Config;
    capability: Capability;
    manifest: ManifestUse;
    results: CaseResult[];
    warmupResults: CaseResult[];
    memorySamples: MemorySample[];
    environment: Environment;
    sessionMs: Record<string, number>;
    wallMs: number;
    timingNotes: string[];
    completionFloors: CompletionFloors;
    /** ORT's operator profile under profile=ops, else null. */
    profile?: unknown;
    /** The realms' GPU bytes and the leak check (www/memory-summary.js). */
    gpuMemory?: GpuMemorySummary | null;
    /** Every session the page's realm created (browser/sessions.js). */
    sessions?: SessionRecord[] | null;
    /** verify=wasm only: the reference decode of every timed case, in the order of results. */
    verification?: VerificationInput | null;
}

/** What www/verify.js measured. */
export interface VerificationInput {
    method: Verify;
    wallMs: number;
    cases: VerifyCaseInput[];
}

export interface VerifyCaseInput {
    id: string;
    repeat: number | null;
    /** The timed run's tokenIds. */
    tokenIds: number[];
    referenceTokenIds: number[];
    /** Per step both decodes ran (0 = prefill): the largest |WebGPU logit - WASM logit|, NaN for a NaN logit. */
    stepMaxAbsDiff: number[];
}

/** One ORT session the page created. */
export interface SessionRecord {
    role: "vision" | "decoder" | "verify";
    graph: "vision" | "decoder";
    loader: Loader;
    model: LoadedFile;
    externalData: ExternalDataFile | null;
    executionProviders: string[];
    options: SessionOptionsUsed;
    createMs: number;
}

export interface LoadedFile {
    url: string;
    /** As served; null where the server gave no size. */
    bytes: number | null;
}

export interface ExternalDataFile {
    /** The name the .onnx refers to it by. */
    path: string;
    url: string;
    bytes: number | null;
}

export interface SessionOptionsUsed {
    graphOptimizationLevel: "disabled" | "basic" | "extended" | "all";
    /** Output name to "cpu" or "gpu-buffer"; an output not named stays on the CPU. */
    preferredOutputLocation: Record<string, string>;
    freeDimensionOverrides: Record<string, number>;
    enableProfiling: boolean;
    enableGraphCapture: boolean;
    /** Null: left to ORT. */
    enableCpuMemArena: boolean | null;
    enableMemPattern: boolean | null;
    logSeverityLevel: number;
}

/** verify=wasm: every timed case against the same decode on the WASM (CPU) execution provider. */
export interface Verification {
    method: Verify;
    tolerance: VerificationTolerance;
    passed: boolean;
    agreeing: number;
    total: number;
    worst: VerifiedCase | null;
    cases: VerifiedCase[];
    wallMs: number;
}

export interface VerificationTolerance {
    maxAbsLogitDiff: number;
    /** "fp16" when an fp16 graph ran (tier 242, decoder fp16-matmul), else "fp32". */
    precision: "fp16" | "fp32";
    tokens: "equal";
}

export interface VerifiedCase {
    id: string;
    repeat: number | null;
    tokensAgree: boolean;
    /** Step 0 is the prefill's choice; null when every token agrees. */
    firstDivergingStep: number | null;
    /** Null when a difference was not a finite number. */
    maxAbsLogitDiff: number | null;
    stepsCompared: number;
    referenceTokenIds: number[];
    withinTolerance: boolean;
}

export interface CompletionFloors {
    page: FloorRounds | null;
    worker: FloorRounds | null;
    /** The decoder worker's (realm=worker). */
    decoderWorker: FloorRounds | null;
}

export interface Capability {
    layers: number;
    hiddenSize: number;
    intermediateSize: number;
    attentionHeads: number;
    kvHeads: number;
    vocabulary: number;
    maxTokens: number;
    vision: string;
    decoder: string;
}

export interface Environment {
    userAgent: string;
    adapter: unknown;
    ortVersion: string;
    crossOriginIsolated: boolean;
    hardwareConcurrency: number | null;
    /** The vision worker's adapter (staged schedule). */
    workerAdapter?: unknown;
    /** The decoder worker's adapter (realm=worker). */
    decoderWorkerAdapter?: unknown;
}

export interface MemorySample {
    label: string;
    atMs: number;
    jsHeapSizeLimit?: number;
    totalJSHeapSize?: number;
    usedJSHeapSize?: number;
    userAgentBytes?: number;
    userAgentMemoryError?: string;
    userAgentMs?: number;
    /** The page's GPU bytes; null until its device exists. */
    gpu?: GpuBytes | null;
    wasmHeaps?: WasmHeap[];
    /** The vision worker's last report of its own realm (staged schedule). */
    worker?: RealmMemory;
    /** The decoder worker's last report of its own realm (realm=worker). */
    decoderWorker?: RealmMemory;
    sampleMs: number;
}

export interface GpuBytes {
    liveBytes: number;
    peakBytes: number;
    liveByKind: Record<string, number>;
    created: number;
    destroyed: number;
    collected: number;
    deviceDestroyed: boolean;
    measuredBy: string;
    /** The peak since the sample before (memory samples only). */
    windowPeakBytes?: number;
}

export interface WasmHeap {
    label: string;
    bytes: number;
    shared: boolean;
}

export interface RealmMemory {
    gpu: GpuBytes | null;
    wasmHeaps: WasmHeap[];
    /** The worker's performance.memory (Chromium only). */
    totalJSHeapSize?: number;
    usedJSHeapSize?: number;
}

export interface LiveAfterCase {
    label: string;
    liveBytes: number;
}

export interface LeakCheck {
    afterCases: LiveAfterCase[];
    grows: boolean;
    grownBytes: number;
    repeatGrownBytes: number;
    verdict: string;
}

export interface GpuMemorySummary {
    measuredBy: string;
    page: GpuBytes | null;
    worker: GpuBytes | null;
    /** The decoder worker's device at its last report (realm=worker). */
    decoderWorker?: GpuBytes;
    leakCheck: LeakCheck;
}

export interface ManifestUse {
    url: string;
    name: string | null;
    vision: unknown;
    decoder: unknown;
}

export interface PollSetting {
    mode: Poll;
    kickMs: number | null;
}

export interface FloorRounds {
    rounds: number;
    warmupRounds: number;
    emptyQueueMs: number[];
    dispatchReadbackMs: number[];
    poll: Poll;
    kickMs: number | null;
    kicks: number;
    /** The realm's probe, warm-up rounds and pipeline included (the probe phase); absent from older records. */
    probeMs?: number;
}

export interface CompletionFloor extends FloorRounds {
    emptyQueue: LatencyStats | null;
    dispatchReadback: LatencyStats | null;
}

export interface Completion {
    page: CompletionFloor | null;
    worker: CompletionFloor | null;
    /** The decoder worker's floor (realm=worker), which the check then uses. */
    decoderWorker?: CompletionFloor;
    check: CompletionCheck;
}

export interface RunProbe {
    tokenLatency: LatencyStats | null;
    submit: LatencyStats | null;
    sync: LatencyStats | null;
    choose: LatencyStats | null;
    prefillSubmit: LatencyStats | null;
    prefillSync: LatencyStats | null;
    timeToFirstToken: LatencyStats | null;
    tokensPerSecond: number | null;
    gpuMsPerDecoderRun: number | null;
}

export interface RepeatFigures {
    repeat: number | null;
    caseP50Ms: number | null;
    visionP50Ms: number | null;
    prefillP50Ms: number | null;
    timeToFirstTokenP50Ms: number | null;
    tokenP50Ms: number | null;
    tokenP90Ms: number | null;
    msPerToken: number | null;
    tokensPerSecond: number | null;
}

export interface RepeatIntervals {
    caseP50Ms: MeanInterval | null;
    visionP50Ms: MeanInterval | null;
    prefillP50Ms: MeanInterval | null;
    timeToFirstTokenP50Ms: MeanInterval | null;
    tokenP50Ms: MeanInterval | null;
    tokenP90Ms: MeanInterval | null;
    msPerToken: MeanInterval | null;
    tokensPerSecond: MeanInterval | null;
}

export interface Repeats {
    count: number;
    perRepeat: RepeatFigures[];
    interval: RepeatIntervals;
    tokensAgree: boolean;
}

export interface FirstRun {
    id: string;
    warmup: boolean;
    totalMs: number;
    visionMs: number;
    prefillMs: number;
    firstTokenStepMs: number | null;
}

export interface SteadyState {
    runs: number;
    caseP50Ms: number | null;
    visionP50Ms: number | null;
    prefillP50Ms: number | null;
    tokenP50Ms: number | null;
}

export interface PipelineCompilation {
    first: FirstRun;
    steady: SteadyState | null;
    prefillExtraMs: number | null;
    visionExtraMs: number | null;
}

/** The whole summary: /benchmark-result's body and window.__benchmarkResult. */
export interface PageSummary {
    runId: string;
    tier: string;
    memoryMode: Memory;
    loaderMode: Loader;
    scheduleMode: Schedule;
    decoderMode: string;
    benchmarkScope: Scope;
    capability: Capability;
    cases: number;
    nCER: number | null;
    distance: number | null;
    characters: number | null;
    exact: number | null;
    medianMs: number | null;
    peakCaseMs: number | null;
    memorySamples: MemorySample[];
    results: CaseResult[];
    config: Config;
    casesName: string;
    weights: Weights;
    maxTokens: number;
    accuracyApplicable: boolean;
    meanMs: number | null;
    p90Ms: number | null;
    msPerToken: number | null;
    environment: Environment;
    timingNotes: string[];
    sessionMs: Record<string, number>;
    wallMs: number;
    manifest: ManifestUse;
    poll: PollSetting;
    completion: Completion;
    completionBound: boolean;
    decodeProbe: RunProbe;
    repeats: Repeats;
    warmupResults: CaseResult[];
    pipelineCompilation: PipelineCompilation | null;
    profile: unknown;
    /** GPU bytes per realm from the wrapped devices (absent in older records). */
    gpuMemory?: GpuMemorySummary;
    /** Every session the page's realm created (absent in older records). */
    sessions?: SessionRecord[];
    /** verify=wasm only. */
    verification?: Verification;
}
