import Dependencies; import CasePaths; import Clocks; import CustomDump; import IdentifiedCollections; import IssueReporting; import ConcurrencyExtras
