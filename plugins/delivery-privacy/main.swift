// The `delivery-privacy` filter: withholds `message.delivered` events and
// delivery fields of replies for users and channel types with delivery
// receipts off.
import EventBusPlugin
import PrivacyFilter

await PluginMain.run(PrivacyFilter(policy: .delivery))
