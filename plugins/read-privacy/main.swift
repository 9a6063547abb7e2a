// The `read-privacy` filter: withholds `message.read` events and read fields
// of replies for users and channel types with read receipts off.
import EventBusPlugin
import PrivacyFilter

/// The options of every plugin, and `--reciprocity`.
struct ReadPrivacyOptions: PluginArguments {
    @OptionGroup var plugin: PluginOptions

    @Flag(help: "A viewer with read receipts off sees nobody's read receipts in one-to-one channels.")
    var reciprocity = false
}

await PluginMain.run(ReadPrivacyOptions.self) { options in
    PrivacyFilter(policy: .read, reciprocity: options.reciprocity)
}
