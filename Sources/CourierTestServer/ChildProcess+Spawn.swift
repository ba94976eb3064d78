import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension ChildProcess {
    /// A program started with `posix_spawn`, with the read ends of its two output pipes.
    struct Spawned {
        let process: ProcessWatch
        /// The read end of its standard output.
        let output: Int32
        /// The read end of its standard error.
        let errors: Int32

        /// Starts `executable`; standard input is `/dev/null`, the outputs go to new pipes whose
        /// read ends the caller owns.
        init(executable: String, arguments: [String], environment: [String: String]) throws(StartError) {
            self = try Spawned.launches.withLock { _ throws(StartError) in
                try Self(launching: executable, arguments: arguments, environment: environment)
            }
        }

        /// One launch at a time: a pipe is made close-on-exec in a second step (`pipe2` is not
        /// in Swift's Glibc module), and another of our launches in between must not inherit it.
        private static let launches = Mutex(())

        private init(launching executable: String, arguments: [String], environment: [String: String]) throws(StartError) {
            func failure(_ step: String, _ code: Int32) -> StartError {
                StartError(description: "could not start \(executable): \(step) failed: \(String(cString: strerror(code)))")
            }
            var outputPipe: [Int32] = [-1, -1]
            var errorPipe: [Int32] = [-1, -1]
            guard Self.makePipe(&outputPipe) else { throw failure("pipe", errno) }
            guard Self.makePipe(&errorPipe) else {
                let code = errno
                close(outputPipe[0])
                close(outputPipe[1])
                throw failure("pipe", code)
            }
            // The parent keeps only the read ends; the write ends live on in the child alone, so
            // the reads end when it exits.
            defer {
                close(outputPipe[1])
                close(errorPipe[1])
            }
            let spawned = Self.spawn(executable, arguments, environment: environment, stdout: outputPipe[1], stderr: errorPipe[1])
            switch spawned {
            case .success(let pid):
                process = ProcessWatch(pid: pid)
                output = outputPipe[0]
                errors = errorPipe[0]
            case .failure(let step, let code):
                close(outputPipe[0])
                close(errorPipe[0])
                throw failure(step, code)
            }
        }

        /// A pipe whose two ends close on exec.
        private static func makePipe(_ ends: inout [Int32]) -> Bool {
            guard pipe(&ends) == 0 else { return false }
            for end in ends where fcntl(end, F_SETFD, FD_CLOEXEC) != 0 {
                let code = errno
                close(ends[0])
                close(ends[1])
                errno = code
                return false
            }
            return true
        }

        private enum SpawnResult {
            case success(pid_t)
            case failure(step: String, code: Int32)
        }

        /// `posix_spawn` with the file actions and signal settings a clean child needs: every
        /// signal at its default disposition and none blocked, whatever this process set.
        private static func spawn(
            _ executable: String, _ arguments: [String], environment: [String: String], stdout: Int32, stderr: Int32
        ) -> SpawnResult {
            var actions = posix_spawn_file_actions_t()
            var code = posix_spawn_file_actions_init(&actions)
            guard code == 0 else { return .failure(step: "posix_spawn_file_actions_init", code: code) }
            defer { posix_spawn_file_actions_destroy(&actions) }
            code = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            guard code == 0 else { return .failure(step: "posix_spawn_file_actions_addopen", code: code) }
            code = posix_spawn_file_actions_adddup2(&actions, stdout, 1)
            guard code == 0 else { return .failure(step: "posix_spawn_file_actions_adddup2", code: code) }
            code = posix_spawn_file_actions_adddup2(&actions, stderr, 2)
            guard code == 0 else { return .failure(step: "posix_spawn_file_actions_adddup2", code: code) }
            // Nothing else is inherited: a socket another test opened without close-on-exec
            // (FoundationNetworking's libcurl, say) would stay open in the child, so its server
            // would never see it close while the child runs.
            if let addCloseFrom {
                code = addCloseFrom(&actions, 3)
                guard code == 0 else { return .failure(step: "posix_spawn_file_actions_addclosefrom_np", code: code) }
            }

            var attributes = posix_spawnattr_t()
            code = posix_spawnattr_init(&attributes)
            guard code == 0 else { return .failure(step: "posix_spawnattr_init", code: code) }
            defer { posix_spawnattr_destroy(&attributes) }
            var noSignals = sigset_t()
            var allSignals = sigset_t()
            sigemptyset(&noSignals)
            sigfillset(&allSignals)
            code = posix_spawnattr_setsigmask(&attributes, &noSignals)
            guard code == 0 else { return .failure(step: "posix_spawnattr_setsigmask", code: code) }
            code = posix_spawnattr_setsigdefault(&attributes, &allSignals)
            guard code == 0 else { return .failure(step: "posix_spawnattr_setsigdefault", code: code) }
            code = posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
            guard code == 0 else { return .failure(step: "posix_spawnattr_setflags", code: code) }

            let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
            defer { for pointer in argv { free(pointer) } }
            guard !argv.dropLast().contains(where: { $0 == nil }) else { return .failure(step: "strdup", code: ENOMEM) }
            var pid = pid_t()
            // This process's environment with `environment` on top; the inherited one as it is when
            // nothing is added.
            guard !environment.isEmpty else {
                code = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
                guard code == 0 else { return .failure(step: "posix_spawn", code: code) }
                return .success(pid)
            }
            let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for pointer in envp { free(pointer) } }
            guard !envp.dropLast().contains(where: { $0 == nil }) else { return .failure(step: "strdup", code: ENOMEM) }
            code = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            guard code == 0 else { return .failure(step: "posix_spawn", code: code) }
            return .success(pid)
        }
    }

    /// One started program's id, and whether it has ended: the watchdog may signal it only
    /// until then.
    final class ProcessWatch: Sendable {
        private struct State {
            var ended = false
            var stopped = false
        }

        private let pid: pid_t
        private let state = Mutex(State())

        init(pid: pid_t) { self.pid = pid }

        /// Whether the watchdog signalled it.
        var wasStopped: Bool { state.withLock { $0.stopped } }

        /// Sends `signal` unless the program has ended.
        func stop(with signal: Int32) {
            state.withLock { state in
                guard !state.ended else { return }
                state.stopped = true
                kill(pid, signal)
            }
        }

        /// Blocks until the program ends, then reaps it.
        /// - Returns: Its exit status, or the number of the signal that ended it; `-1` when it
        ///   could not be waited for.
        func waitAndReap() -> Int32 {
            var information = siginfo_t()
            while waitid(P_PID, id_t(pid), &information, WEXITED | WNOWAIT) != 0 {
                guard errno == EINTR else {
                    state.withLock { $0.ended = true }
                    return -1
                }
            }
            state.withLock { $0.ended = true }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 {
                guard errno == EINTR else { return -1 }
            }
            let signal = status & 0x7f
            return signal == 0 ? (status >> 8) & 0xff : signal
        }
    }
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), looked up at run time:
/// Swift's Glibc module does not import it (a GNU extension of `spawn.h`), and linking it by name
/// would make this library fail to link or load on an older glibc. Where it is missing, the child
/// inherits what was not opened close-on-exec, as before.
private let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
    // RTLD_DEFAULT is the null handle on glibc.
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
}()
