import CCurl
import Courier
import Foundation
import Synchronization

// The engine as a task executor: steps of tasks that prefer it run on the engine thread,
// between two rounds of libcurl work.

extension CurlEngine: TaskExecutor {
    /// Whether the caller runs on the engine thread, inside its loop.
    var isEngineThread: Bool {
        let id = threadID.load(ordering: .acquiring)
        return id != 0 && pthread_equal(pthread_t(id), pthread_self()) != 0
    }

    /// Runs a task's next step on the engine thread, between two rounds of libcurl work.
    ///
    /// A step enqueued on the engine thread (the usual case: the engine resumed a caller) waits in
    /// a plain array and runs before the loop polls again, so the round trip from a finished
    /// transfer to its caller and on to the caller's next request needs no lock, no wakeup and no
    /// other thread. Once shutdown has begun, steps from other threads go to the global executor
    /// (and, once the loop has ended, every step), so no task is ever stranded.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if isEngineThread {
            jobs.append(job)
        } else if !post(.run(job), requireAccepting: true) {
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }

    /// Runs the waiting task steps, and those they enqueue, up to ``CurlJobQueue/stepsPerRound``.
    func runJobs() {
        var budget = CurlJobQueue.stepsPerRound
        while !jobs.isEmpty, budget > 0 {
            let batch = jobs.takeBatch()
            for index in batch.indices {
                guard budget > 0 else {
                    jobs.putBack(batch[index...])
                    break
                }
                budget -= 1
                batch[index].runSynchronously(on: asUnownedTaskExecutor())
            }
        }
    }
}
