import FerryKit
import Foundation
import Testing

@testable import FerryCLI

/// Value options carry their type, reading and default (the help says the
/// default from it); one transfer-options group makes the library's options;
/// each command validates its options before it runs (issue 27 item 6).
@Suite struct TypedOptionValuesTests {
    func parse(_ args: [String], _ command: any Command.Type) throws -> ParsedArguments {
        try ArgumentParser.parse(args, spec: command.spec)
    }

    func usageMessage(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let e as UsageError {
            return e.message
        } catch {
            return "not a usage error: \(error)"
        }
    }

    @Test func theHelpSaysTheDefaultTheOptionHas() {
        #expect(TransferKeys.jobs.defaultValue == 4)
        #expect(TransferKeys.jobs.option.help == "transfers at once (default 4)")
        #expect(TransferKeys.retries.option.help == "failed tries in a row before giving up (default 5)")
        #expect(ServeCommand.Keys.port.option.help == "port (default 8000; 0 picks a free one)")
        #expect(CardCommand.Keys.kind.option.help == "the card to act as (default flashair; ezshare is read-only)")
        #expect(SyncCommand.Keys.jobs.option.help == "downloads at once from a server (default 4)")
        let help = ArgumentParser.help(GetCommand.spec)
        #expect(help.contains("--jobs N") && help.contains("transfers at once (default 4)"))
        // An option without a default says none.
        #expect(GetCommand.Keys.output.option.help == "file, or folder to download into; - for standard output")
    }

    @Test func valuesAreReadByTheirTypeAndAbsentOnesAreTheDefault() throws {
        let none = try parse(["ftp://h/a"], GetCommand.self)
        #expect(try none.value(TransferKeys.jobs) == 4)
        #expect(try none.value(TransferKeys.retries) == 5)
        #expect(try none.value(GetCommand.Keys.only) == nil)
        #expect(!none.given(TransferKeys.jobs))
        let some = try parse(["ftp://h/a", "-j", "9", "--retries=0", "--only", "JPG,cr2", "-j12"], GetCommand.self)
        #expect(try some.value(TransferKeys.jobs) == 12, "the last one given")
        #expect(try some.value(TransferKeys.retries) == 0)
        #expect(try some.value(GetCommand.Keys.only) == ["jpg", "cr2"])
        #expect(some.given(TransferKeys.jobs))
        let timeouts = try parse(["ftp://h/a", "--connect-timeout", "2.5"], GetCommand.self)
        #expect(try timeouts.value(TimeoutKeys.connect) == .milliseconds(2500))
        #expect(try timeouts.value(TimeoutKeys.timeout) == nil)
        #expect(try timeouts.value(ConnectionKeys.connections) == nil)
        #expect(try parse(["ftp://h/a", "--connections", "3"], GetCommand.self).value(ConnectionKeys.connections) == 3)
    }

    @Test func aValueThatIsNoneSaysWhatTheOptionWants() throws {
        #expect(
            usageMessage { _ = try parse(["u", "-j", "0"], GetCommand.self).value(TransferKeys.jobs) }
                == "--jobs wants a number from 1 to 64, not \"0\"")
        #expect(
            usageMessage { _ = try parse(["u", "-j", "x"], GetCommand.self).value(TransferKeys.jobs) }
                == "--jobs wants a number from 1 to 64, not \"x\"")
        #expect(
            usageMessage { _ = try parse(["u", "--timeout", "0"], GetCommand.self).value(TimeoutKeys.timeout) }
                == "--timeout wants a number of seconds, not \"0\"")
        #expect(
            usageMessage {
                _ = try parse(["u", "--connections", "65"], GetCommand.self).value(ConnectionKeys.connections)
            }
                == "--connections wants a number from 1 to 64, not \"65\"")
        #expect(
            usageMessage { _ = try parse(["u", "--only", ","], GetCommand.self).value(GetCommand.Keys.only) }
                == "--only wants extensions: jpg,cr2")
        #expect(
            usageMessage { _ = try parse(["--port", "70000"], ServeCommand.self).value(ServeCommand.Keys.port) }
                == "--port wants a number from 0 to 65535, not \"70000\"")
        #expect(
            usageMessage {
                _ = try parse(["--cache-size", "lots"], ServeCommand.self).value(ServeCommand.Keys.cacheSize)
            }
                == "--cache-size wants a size such as 500M, 2G or 1048576")
    }

    @Test func theTransferGroupMakesTheLibrarysOptions() throws {
        let get = GetCommand.Keys.transfer
        let plain = try get.values(try parse(["u"], GetCommand.self))
        #expect(plain == .init(jobs: 4, maxRetries: 5, overwrite: .fail, verifyTLS: true))
        let set = try get.values(try parse(["u", "--overwrite", "-k", "--retries", "2", "-j", "3"], GetCommand.self))
        #expect(set.download.overwrite == .overwrite && set.download.maxRetries == 2 && !set.download.verifyTLS)
        #expect(set.jobs == 3)
        #expect(try get.values(try parse(["u", "--skip-existing"], GetCommand.self)).overwrite == .skip)
        #expect(
            usageMessage { _ = try get.values(try parse(["u", "--overwrite", "--skip-existing"], GetCommand.self)) }
                == "--overwrite and --skip-existing exclude each other")

        // put has no --retries: the library's own stays.
        let put = try PutCommand.Keys.transfer.values(try parse(["a", "u", "--skip-existing"], PutCommand.self))
        #expect(put.maxRetries == nil && put.upload.maxRetries == UploadOptions().maxRetries)
        #expect(put.upload.overwrite == .skip && put.upload.verifyTLS)
        // sync never replaces.
        let sync = try SyncCommand.Keys.transfer.values(try parse(["u", "d", "-j", "2"], SyncCommand.self))
        #expect(sync.overwrite == .fail && sync.jobs == 2 && sync.maxRetries == 5)
    }

    @Test func eachCommandValidatesItsOptionsBeforeItRuns() throws {
        #expect(
            usageMessage { try GetCommand.validate(try parse(["u", "-o", "-", "-r"], GetCommand.self)) }
                == "-r cannot write to standard output (-o -)")
        #expect(
            usageMessage { try GetCommand.validate(try parse(["u", "-o", ""], GetCommand.self)) }
                == "-o '' names no file; name a file, a folder, or - for standard output")
        #expect(usageMessage { try GetCommand.validate(try parse(["u", "-o", "x", "-r"], GetCommand.self)) } == nil)
        #expect(
            usageMessage { try CatCommand.validate(try parse(["u", "--json"], CatCommand.self)) }
                == "--json and -o - would both write to standard output")
        #expect(
            usageMessage {
                try PutCommand.validate(try parse(["a", "u", "--overwrite", "--skip-existing"], PutCommand.self))
            }
                == "--overwrite and --skip-existing exclude each other")
        #expect(
            usageMessage { try SyncCommand.validate(try parse(["u", "d", "--interval", "5"], SyncCommand.self)) }
                == "--interval goes with --watch")
        #expect(
            usageMessage {
                try SyncCommand.validate(try parse(["u", "d", "--interval", "0.01", "-w"], SyncCommand.self))
            }
                == "--interval wants seconds from 0.05 to 86400, not \"0.01\"")
        #expect(
            usageMessage { try SyncCommand.validate(try parse(["u", "d", "-n", "-w"], SyncCommand.self)) }
                == "--dry-run shows one pass; it does not go with --watch")
        #expect(
            usageMessage { try SyncCommand.validate(try parse(["u", "d", "--layout", "flat"], SyncCommand.self)) }
                == "--layout is tree, date or a template with {tokens}, not \"flat\"")
        #expect(
            usageMessage {
                try SyncCommand.validate(try parse(["ezshare:///DCIM", "d", "--delete-after"], SyncCommand.self))
            }?
            .hasPrefix("--delete-after cannot delete from an ez Share card") == true)
    }

    @Test func syncsOptionsAsTheArgumentsGiveThem() throws {
        let options = try SyncCommand.options(
            try parse(
                [
                    "u", "d", "--layout", "date", "--since", "2024-05-01Z", "-j", "2", "--only", "jpg", "-w",
                    "--interval", "2",
                ],
                SyncCommand.self))
        #expect(options.layout == .date && options.folderTemplate == nil)
        #expect(options.since == Date(timeIntervalSince1970: 1_714_521_600))
        #expect(options.jobs == 2 && options.extensions == ["jpg"] && options.interval == .seconds(2))
        let templated = try SyncCommand.options(try parse(["u", "d", "--layout", "{taken:%Y}"], SyncCommand.self))
        #expect(templated.folderTemplate?.description == "{taken:%Y}")
    }
}
