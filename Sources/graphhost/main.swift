import ArgumentParser
GraphHostCommand.main()
