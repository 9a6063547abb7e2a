import Foundation

/// What a verified app token says: the user it speaks for and until when.
public struct AppToken: Sendable, Equatable {
    /// The user id of the `sub` claim: the stream shows this user's events only.
    public let user: String
    /// The `exp` claim.
    public let expires: Date

    public init(user: String, expires: Date) {
        self.user = user
        self.expires = expires
    }
}
