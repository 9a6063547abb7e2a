/// Runs `body`, then `cleanup` whether `body` threw or not, and returns what `body`
/// returned: the `defer` of a test whose cleanup must be awaited (Swift cannot `await`
/// in a `defer`). A cleanup that fails after a failed `body` is ignored: the first error
/// is the one to see.
func awaitingCleanup<T>(_ body: () async throws -> T, cleanup: () async throws -> Void) async throws -> T {
    let result: T
    do {
        result = try await body()
    } catch {
        try? await cleanup()
        throw error
    }
    try await cleanup()
    return result
}
