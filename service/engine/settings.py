"""The engine's settings: batching limits and the runtime's options (plain pydantic models).

`service/http/settings.py` nests these in the environment-driven ServiceSettings; nothing here reads env.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class BatchingSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_batch_size: int = Field(
        32, ge=1, le=4096, description="Most sequences decoded together in one step (each beam hypothesis counts)."
    )
    # Reserved per request as num_beams * (source tokens + max_new_tokens): bounds the KV cache.
    max_tokens_in_flight: int = Field(
        16384,
        ge=1,
        description="Token budget of the running requests, num_beams * (source tokens + max_new_tokens) each; "
        "bounds the KV cache.",
    )
    max_queue: int = Field(256, ge=0, description="Most requests waiting to start; beyond it a request gets 429.")
    # A lane is a batch of its own (scheduler, KV cache, worker thread) over the same onnxruntime sessions,
    # as Triton's model instances are. With one onnxruntime thread each, two lanes on two cores run two
    # graphs at once instead of one graph on two threads that meet at every operator
    # (BENCHMARKS.md#issue-23-lanes). Each lane gets its share of the three limits above.
    lanes: int = Field(
        1,
        ge=1,
        le=64,
        description="Independent batches, each stepped by its own worker thread over the same sessions; "
        "max_batch_size, max_tokens_in_flight and max_queue are shared out among them.",
    )
    # A process is a whole engine of its own (its lanes, tokenizing, edit guard, sessions and GIL); the
    # serving process only routes requests to them. Two lanes in one process waited for its one GIL a third of
    # the time on two cores (BENCHMARKS.md, issue 23: engine processes).
    processes: int = Field(
        1,
        ge=1,
        le=64,
        description="Engine processes, each a whole engine (lanes, text work, onnxruntime sessions) that the "
        "serving process routes requests to; max_batch_size, max_tokens_in_flight and max_queue are shared out "
        "among them, and so are the cores when intra_op_threads is 0.",
    )
    # When the engine is idle, wait up to this long for more arrivals so their encoder passes batch.
    max_wait_ms: float = Field(
        0.0,
        ge=0.0,
        le=10_000.0,
        description="Milliseconds an idle engine waits for more arrivals, so that their encoder passes batch.",
    )

    # Prompt lookup (drafts.py): a normalizer copies most of its source, so the source says what comes next.
    draft_tokens: int = Field(
        4,
        ge=0,
        le=16,
        description="Tokens a greedy request drafts from its source and checks in one decoder call (prompt "
        "lookup; the output stays greedy's) while the batch is small (rows x tokens <= 16); 0 decodes one token "
        "a step. Only for models whose source and output share a vocabulary.",
    )

    @model_validator(mode="after")
    def _check_lanes(self) -> BatchingSettings:
        if self.lanes * self.processes > self.max_batch_size:
            raise ValueError(
                f"lanes x processes ({self.lanes} x {self.processes}) must be at most max_batch_size "
                f"({self.max_batch_size})"
            )
        return self

    def lane_share(self) -> BatchingSettings:
        """One lane's limits: the batch rows, token budget and queue divided among the lanes."""
        return self if self.lanes == 1 else self._divided(self.lanes, lanes=1)

    def process_share(self) -> BatchingSettings:
        """One engine process's limits: the batch rows, token budget and queue divided among the processes."""
        return self if self.processes == 1 else self._divided(self.processes, processes=1)

    def _divided(self, parts: int, **update: int) -> BatchingSettings:
        return self.model_copy(
            update={
                "max_batch_size": self.max_batch_size // parts,
                "max_tokens_in_flight": max(1, self.max_tokens_in_flight // parts),
                "max_queue": -(-self.max_queue // parts),
                **update,
            }
        )


class RuntimeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # Which library runs the model directory's ONNX graphs, chosen once at startup; the HTTP layer and the
    # engine's batching are the same either way. OpenVINO (the `openvino` extra) is there for bf16 on
    # CPUs with AVX512-BF16 or AMX: onnxruntime's CPU provider has no bf16 MatMul on x86
    # (BENCHMARKS.md#issue-23-an-openvino-runtime-bf16-where-the-cpu-has-it).
    backend: Literal["onnxruntime", "openvino"] = Field(
        "onnxruntime",
        description="The library that runs the graphs: onnxruntime, or openvino (CPU only; needs the openvino "
        "extra). Both run the same model directory and variant.",
    )
    # f32 keeps every backend's outputs within float rounding of each other; bf16 trades about two decimal
    # digits of the logits for speed, so it is asked for, never chosen by the CPU alone.
    inference_precision: Literal["f32", "bf16"] = Field(
        "f32",
        description="The precision of the graphs' arithmetic (OpenVINO's INFERENCE_PRECISION_HINT): "
        "f32, or bf16 (backend openvino only, on a CPU with AVX512-BF16 or AMX; a startup error elsewhere).",
    )
    intra_op_threads: int = Field(
        0,
        ge=0,
        le=1024,
        description="Threads per operator (onnxruntime's intra-op threads, OpenVINO's INFERENCE_NUM_THREADS); "
        "0 = the runtime's default (one per core).",
    )
    inter_op_threads: int = Field(
        0, ge=0, le=1024, description="onnxruntime threads across operators (needs intra_op_threads); 0 = default."
    )
    graph_optimization: Literal["disable", "basic", "extended", "all"] = Field(
        "all", description="onnxruntime's graph optimization level."
    )
    # True: both sessions run on onnxruntime's one process-wide pool of spinning intra-op threads. The
    # encoder and decoder alternate within every step; with a pool each, the idle pool's spinning
    # threads took the busy one's cores, so each pool had to stop spinning, and waking threads costs
    # every small operator (BENCHMARKS.md#shared-thread-pool-d192-v6). The pool belongs to the
    # process: its first user sizes it (`intra_op_threads`, `inter_op_threads`), and once it exists
    # onnxruntime refuses a pool of its own to every other session in the process. Hence None (the
    # default): on in atento's own server process (`python -m service` resolves it), off for an Engine
    # embedded in someone else's program. The two spinning switches below apply only to sessions with
    # a pool of their own.
    shared_thread_pool: bool | None = Field(
        None,
        description="Both sessions share onnxruntime's process-wide thread pool: true, false, or null = on in "
        "`python -m service`, off for an Engine embedded in another program.",
    )
    # Per-session pools: spinning intra-op threads of the idle session steal a core from the busy one
    # while the encoder and decoder alternate (BENCHMARKS.md#first-runs-decoder-spinning-batching-optimizations).
    allow_spinning: bool = Field(False, description="onnxruntime: the encoder's own thread pool spins while idle.")
    # Off too: with few cores the spinning decoder threads compete with the Python step loop and
    # other processes (BENCHMARKS.md#first-runs-decoder-spinning-batching-optimizations). Turn on only
    # with cores to spare.
    decoder_allow_spinning: bool = Field(
        False, description="onnxruntime: the decoder's own thread pool spins while idle."
    )
    io_binding: bool = Field(
        True, description="CUDA only: keep the cross-attention keys and values on the GPU between steps."
    )
    # Format 3's decoder reads each row's own cache and source length where format 2 reads the widest row's and
    # a mask (BENCHMARKS.md, issue 23: decoder format 3).
    # It gives no attention weights: steps of requests that ask for them run format 2, on the same cache.
    gqa_decoder: bool = Field(
        True,
        description="onnxruntime on the CPU: run the variant's decoder_gqa graph (format 3) for steps that need no "
        "attention weights, when the model directory has one.",
    )

    @model_validator(mode="after")
    def _check_threads(self) -> RuntimeSettings:
        if self.inter_op_threads > 0 and self.intra_op_threads == 0:
            # Not an error in onnxruntime, but almost always a misconfiguration worth failing loudly.
            raise ValueError("set intra_op_threads when setting inter_op_threads")
        return self

    @model_validator(mode="after")
    def _check_precision(self) -> RuntimeSettings:
        if self.inference_precision == "bf16" and self.backend != "openvino":
            raise ValueError(
                "inference_precision bf16 needs backend openvino: onnxruntime's CPU provider has no bf16 MatMul "
                "on x86 (set ATENTO_RUNTIME__BACKEND=openvino, or inference_precision f32)"
            )
        return self
