class Program:
    def execute(self) -> None:
        """Execute the program."""
        ...

    def synchronize(self) -> None:
        """Wait for completion."""
        ...

    def is_complete(self) -> bool:
        """Check if execution is done."""
        ...

    @property
    def stats(self) -> ProgramStats:
        """Execution statistics (includes total_cycles)."""
        ...

    @property
    def codegen_artifact_dir(self) -> str | None:
        """For codegen-only targets (e.g. ascend_npu emit-only), emitted directory."""
        ...

class ProgramStats:
    compile_time_ms: float
    execute_time_ms: float
    task_count: int
    total_cycles: int
