// The `read-privacy` filter: withholds `message.read` events and read fields
// of replies for users and channel types with read receipts off.
// `--reciprocity`: a viewer with read receipts off sees nobody's read
// receipts in one-to-one channels.
import EventBusPlugin
import PrivacyFilter

await PluginMain.run(flags: ["--reciprocity"]) { configuration in
    PrivacyFilter(policy: .read, reciprocity: configuration.flags.contains("--reciprocity"))
}
