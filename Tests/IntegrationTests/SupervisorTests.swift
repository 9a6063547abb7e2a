import EventBus
import EventBusSupervisor
import EventBusTesting
import Foundation
import Testing
import ZeroMQ

/// `eventbus up`'s supervisor with real plugin processes: SIGKILL, crash loops, ordering.
@Suite(.serialized) struct SupervisorTests {
    @Test func sigkilledPluginsResumeAndTheOutputIsIdenticalToARunWithoutTheKill() async throws {
        let pipeline = try SupervisedPipeline([
            SupervisedPipeline.plugin("counter", executable: "counter", ["--batch", "200"]),
            SupervisedPipeline.plugin("relay", executable: "identity", ["--batch", "200"]),
        ])
        try await pipeline.stopAfter {
            try await pipeline.waitUntilReady()
            let publisher = try pipeline.peer()
            var killed: Set<String> = []
            var seqs: [String] = []
            for batch in 0..<40 {
                let events = (0..<500).map { SupervisedPipeline.event(batch * 500 + $0) }
                let reply = try pipeline.call(publisher, "PUB", [Array("in".utf8)] + events)
                #expect(reply.count == 503)
                seqs += reply.dropFirst(3).map { String(decoding: $0, as: UTF8.self) }
                // Kill each plugin once, mid-stream, while it has work in hand.
                if batch == 12, let pid = pipeline.supervisor.processIdentifier(of: "counter") {
                    kill(pid, SIGKILL)
                    killed.insert("counter")
                }
                if batch == 25, let pid = pipeline.supervisor.processIdentifier(of: "relay") {
                    kill(pid, SIGKILL)
                    killed.insert("relay")
                }
            }
            publisher.close()
            #expect(killed == ["counter", "relay"])
            let expected = (0..<20_000).map { "e\($0)" }
            #expect(try pipeline.readIDs("out/", count: 20_000, consumer: "check-out") == expected)
            #expect(try pipeline.readIDs("counter/", count: 20_000, consumer: "check-counter") == expected)
            // The counter's milestones: one per 1,000 events, ids from the SEQ of the input event.
            let milestones = try pipeline.readIDs("diag/", count: 20, consumer: "check-diag")
            #expect(milestones == (1...20).map { "counter:\(seqs[$0 * 1_000 - 1]):0" })
            // Nothing was appended twice to any stage.
            let stats = try pipeline.stats()
            #expect(stats["stages"]?["out"]?.int64Value == 20_000)
            #expect(stats["stages"]?["counter"]?.int64Value == 20_000)
            #expect(stats["stages"]?["diag"]?.int64Value == 20)
        }
    }

    @Test func pluginsRunWithFixedMmapAndTrimThresholds() async throws {
        let pipeline = try SupervisedPipeline([SupervisedPipeline.plugin("relay", executable: "identity")])
        try await pipeline.stopAfter {
            try await pipeline.waitUntilReady()
            let pid = try #require(pipeline.supervisor.processIdentifier(of: "relay"))
            let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
            let variables = environ.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            // Outgrown arrays of 1 MiB and more leave memory; delivery frames stop faulting anew.
            #expect(variables.contains("MALLOC_MMAP_THRESHOLD_=1048576"))
            #expect(variables.contains("MALLOC_TRIM_THRESHOLD_=4194304"))
        }
    }

    @Test func aPluginThatKeepsCrashingIsReportedAndTheOthersKeepRunning() async throws {
        let logs = CapturingLogHandler()
        let pipeline = try SupervisedPipeline([
            SupervisedPipeline.plugin("relay", executable: "identity"),
            // Exits 1 at once, whatever the arguments the supervisor adds.
            PipelineStage(name: "broken", launch: .process(executable: "/bin/false", arguments: [])),
        ], logs: logs) { config in
            config.initialBackoff = .milliseconds(10)
            config.maximumBackoff = .milliseconds(50)
            config.crashLoopLimit = 5
            config.crashLoopBackoff = .milliseconds(200)
        }
        try await pipeline.stopAfter {
            let deadline = Date().addingTimeInterval(20)
            while !pipeline.supervisor.isCrashLooping("broken") && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }  // a poll interval
            #expect(pipeline.supervisor.isCrashLooping("broken"))
            #expect(!pipeline.supervisor.isCrashLooping("relay"))
            // The healthy stage still moves events; the broken one holds them (nothing skips it).
            let publisher = try pipeline.peer()
            _ = try pipeline.call(publisher, "PUB", [Array("in".utf8), SupervisedPipeline.event(1)])
            #expect(try pipeline.readIDs("relay/", count: 1, consumer: "check") == ["e1"])
            #expect(try pipeline.stats()["stages"]?["out"]?.int64Value == 0)

            // What an operator reads: each of the first exits, one critical line when the loop
            // is entered (after the 5th quick exit), then every exit of the loop, each with how
            // the plugin ended.
            let broken = logs.entries.filter { $0.metadata["bus.plugin"] == "broken" }
            let critical = broken.filter { $0.level == .critical }
            #expect(critical.count == 1)
            #expect(critical.first?.message.hasPrefix("PLUGIN CRASH LOOP") == true)
            #expect(critical.first?.metadata["bus.exits_in_a_row"] == "5")
            #expect(critical.first?.metadata["bus.last_exit"] == "exited with status 1", "\(critical)")
            let before = broken.prefix { $0.level != .critical }
            #expect(before.filter { $0.message == "plugin stopped unexpectedly; restarting" }.count == 4)
            let stillLooping = broken.drop { $0.level != .critical }.dropFirst().filter { $0.level >= .warning }
            #expect(stillLooping.allSatisfy { $0.message == "plugin still crash looping; restarting" })
            // A loop that keeps going is reported at every exit (its backoff here is 200 ms).
            var patience = Patience(.seconds(20))
            while logs.entries.filter({ $0.message == "plugin still crash looping; restarting" }).isEmpty && patience.allowsAnotherLook() {
                try await Task.sleep(for: .milliseconds(50))  // a poll interval
            }
            let next = logs.entries.first { $0.message == "plugin still crash looping; restarting" }
            #expect(next?.metadata["bus.exits_in_a_row"].map { Int("\($0)") ?? 0 } ?? 0 >= 6)
            #expect(next?.metadata["bus.exit"] == "exited with status 1")
            #expect(!logs.entries.contains { $0.metadata["bus.plugin"] == "relay" && $0.level >= .warning })
        }
    }

    @Test func aSettingPublishedJustBeforeAnAckReachesEveryLaterStageFirst() async throws {
        let pipeline = try SupervisedPipeline([
            SupervisedPipeline.plugin("first", executable: "identity"),
            SupervisedPipeline.plugin("second", executable: "identity"),
            SupervisedPipeline.plugin("third", executable: "identity"),
        ])
        try await pipeline.stopAfter {
            try await pipeline.waitUntilReady()
            // `out` withholds the private setting, so look at every stage before it.
            let setting = Array(#"{"specversion":"1.0","id":"s1","source":"/test","type":"user.updated","subject":"@bob","time":"2026-11-22T03:10:00.123Z","data":{"user":{"id":"bob","privacy_settings":{"read_receipts":{"enabled":false}}}}}"#.utf8)
            let publisher = try pipeline.peer()
            for round in 0..<20 {
                _ = try pipeline.call(publisher, "PUB", [Array("in".utf8), SupervisedPipeline.event(round * 2)])
            }
            _ = try pipeline.call(publisher, "PUB", [Array("in".utf8), setting, SupervisedPipeline.event(1)])
            let atFirst = try pipeline.readIDs("first/", count: 22, consumer: "check-first")
            let atSecond = try pipeline.readIDs("second/", count: 22, consumer: "check-second")
            for ids in [atFirst, atSecond] {
                let settingIndex = try #require(ids.firstIndex(of: "s1"))
                let ackIndex = try #require(ids.firstIndex(of: "e1"))
                #expect(settingIndex + 1 == ackIndex)
            }
        }
    }

    @Test func unknownPluginDuplicateStageAndReservedNamesFailBeforeAnythingRuns() throws {
        #expect(throws: PipelineError.self) { try Pipeline.parse(list: "no-such-plugin", pluginDirectory: SupervisedPipeline.binDirectory) }
        #expect(throws: PipelineError.self) { try Pipeline.parse(list: "identity,identity", pluginDirectory: SupervisedPipeline.examplePluginDirectory) }
        #expect(throws: PipelineError.self) { try Pipeline.parse(list: "external:out", pluginDirectory: SupervisedPipeline.binDirectory) }
        #expect(throws: PipelineError.self) { try Pipeline.parse(list: "identity,,counter", pluginDirectory: SupervisedPipeline.examplePluginDirectory) }
        let ok = try Pipeline.parse(list: "identity,external:py", pluginDirectory: SupervisedPipeline.examplePluginDirectory)
        #expect(ok.names == ["identity", "py"])
        #expect(ok.input(of: 1) == "identity")
        #expect(ok.output(of: 1) == "out")
        #expect(ok.output(of: 0) == "identity")
    }

    /// Chaos seed 13417130491573036430: a failed fsync stopped the broker, and `eventbus up`
    /// took 20 s to exit, its plugins (waiting for confirms that could not come) SIGKILLed one
    /// after the other, 10 s each. Each plugin here stops only once both have had SIGTERM:
    /// stopped one after the other, the first is SIGKILLed and never writes `exited`.
    @Test func stoppingStopsEveryPluginAtOnceSeed13417130491573036430() async throws {
        try await TemporaryDirectory.with("eventbus-stop") { directory in
            let log = directory.appendingPathComponent("stops").path
            #expect(FileManager.default.createFile(atPath: log, contents: nil))
            // A stand-in plugin: started with `--name NAME` first and the log last (the stage's argument).
            let script = directory.appendingPathComponent("stand-in").path
            let text = #"""
                #!/bin/sh
                name=$2
                for argument; do log=$argument; done
                stop=0
                trap 'stop=1' TERM
                echo "ready $name" >> "$log"
                while [ $stop = 0 ]; do sleep 0.05; done
                echo "term $name" >> "$log"
                while [ "$(grep -c '^term' "$log")" -lt 2 ]; do sleep 0.05; done
                echo "exited $name" >> "$log"

                """#
            #expect(FileManager.default.createFile(atPath: script, contents: Data(text.utf8), attributes: [.posixPermissions: 0o755]))
            let stages = ["first", "second"].map { PipelineStage(name: $0, launch: .process(executable: script, arguments: [log])) }
            let pipeline = try SupervisedPipeline(stages) { config in config.stopTimeout = .seconds(3) }
            func lines() -> [String] { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }
            var patience = Patience(.seconds(30))
            while lines().filter({ $0.hasPrefix("ready") }).count < 2, patience.allowsAnotherLook() {
                try await Task.sleep(for: .milliseconds(20))  // a poll interval
            }
            try #require(lines().filter { $0.hasPrefix("ready") }.count == 2, "both stand-in plugins run: \(lines())")
            try await pipeline.stop()
            #expect(Set(lines().filter { $0.hasPrefix("exited") }) == ["exited first", "exited second"], "\(lines())")
        }
    }
}
