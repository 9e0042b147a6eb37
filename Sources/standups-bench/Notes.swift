/// What the numbers mean and where the costs go: written from profiles, kept beside the
/// code that prints the numbers.
enum Notes {
  static let text = """
    - The bench's clients share the machine's two cores with the server, and one client
      thread reads every connection.
    """
}
